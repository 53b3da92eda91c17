// `workersScaling` of `pnpm bench node`: pushes spread over 8 namespaces, against `weir serve`
// with one worker thread and with two, the two servers taking turns round by round. The figure
// is the ratio of their median mutations/s (two workers over one).
const NAMESPACES = 8;
const CLIENTS = 32;
const MUTATIONS_PER_PUSH = 10;

/**
 * `serve(name, workers)` starts a server and answers it (with a `url` of namespace "bench");
 * `load(url, args)` runs the load generator once.
 */
export async function measureWorkersScaling({ serve, stop, load, log, phaseSeconds, rounds }) {
  const servers = [await serve("weirWorkers1", 1), await serve("weirWorkers2", 2)];
  const args = [
    "--mode",
    "push",
    "-c",
    String(CLIENTS),
    "-m",
    String(MUTATIONS_PER_PUSH),
    "-d",
    String(phaseSeconds),
    "--namespaces",
    String(NAMESPACES),
  ];
  const runs = new Map(servers.map((server) => [server.name, []]));
  try {
    // Each server's namespaces are created once, unmeasured.
    const warmUp = args.map((arg, i) => (args[i - 1] === "-d" ? "1" : arg));
    for (const server of servers) await load(server.url, warmUp);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        log(
          `bench node: ${server.name}: pushes over ${NAMESPACES} namespaces (round ${round + 1}/${rounds})`,
        );
        runs.get(server.name).push((await load(server.url, args)).mutationsPerSec);
      }
    }
  } finally {
    for (const server of servers) await stop(server);
  }
  const one = median(runs.get("weirWorkers1"));
  const two = median(runs.get("weirWorkers2"));
  return {
    workersScaling: one > 0 ? Math.round((two / one) * 100) / 100 : null,
    oneWorkerMutationsPerSec: Math.round(one),
    twoWorkersMutationsPerSec: Math.round(two),
    namespaces: NAMESPACES,
    clients: CLIENTS,
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
