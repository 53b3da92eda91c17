#!/usr/bin/env node
// `pnpm bench node`: weir's Node host against a hand-written Replicache "global version"
// backend (bench/baseline/server.mjs), both on better-sqlite3 over node:http on loopback, both
// driven by the same load generator (`weir bench`), each in its own process. Prints a table,
// then, as the last line, one JSON object with weir's figures, the baseline's, and the ratios.
//
//   pnpm bench node [--quick]     --quick: shorter phases, for a smoke run
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { measureBigPush } from "./node/big-push.mjs";
import { measureWorkersScaling } from "./node/workers-scaling.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const weirBin = join(root, "packages/cli/dist/weir.js");
const quick = process.argv.includes("--quick");
const NAMESPACE = "bench";
const PHASE_SECONDS = quick ? 2 : 5;
const ROUNDS = quick ? 1 : 3;
const FULL_PULL_ROWS = 100_000;
const CLIENTS = 32;
const MUTATIONS_PER_PUSH = 10;
const WAKE_SOCKETS = 500;
// The todo example's createTodo, as its browser app sends it.
const TODO_ARGS = JSON.stringify({ id: "$id", text: "buy milk", done: false, sort: "$n" });

function log(line) {
  process.stderr.write(`${line}\n`);
}

function build() {
  log("bench node: building @weir/cli and its dependencies (cached when up to date)");
  const result = spawnSync(
    "pnpm",
    ["exec", "turbo", "run", "build", "--filter=@weir/cli...", "--output-logs=errors-only"],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
    },
  );
  if (result.status !== 0 || !existsSync(weirBin)) {
    log("bench node: the build failed");
    process.exit(1);
  }
}

/** Starts a server process whose stdout goes to a file, and waits for its {"url"} line. */
/** How many moves to or from the overflow worker the servers' logs tell of. */
function overflowMoves(logFiles) {
  let moves = 0;
  for (const file of logFiles) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n"))
      if (line.includes('"msg":"namespace moved')) moves++;
  }
  return moves;
}

async function startServer(name, args, logFile) {
  const fd = openSync(logFile, "w");
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", fd, "inherit"] });
  closeSync(fd);
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  let code;
  exited.then((c) => {
    code = c;
  });
  for (let waited = 0; waited < 30_000; waited += 50) {
    if (code !== undefined) throw new Error(`${name} exited with ${code} before listening`);
    const line = readFileSync(logFile, "utf8")
      .split("\n")
      .find((l) => l.startsWith('{"url":'));
    if (line) return { name, child, exited, url: `${JSON.parse(line).url}/${NAMESPACE}` };
    await sleep(50);
  }
  child.kill("SIGKILL");
  throw new Error(`${name} did not print its URL within 30 s`);
}

async function stopServer(server) {
  server.child.kill("SIGTERM");
  const timeout = sleep(10_000).then(() => server.child.kill("SIGKILL"));
  await Promise.race([server.exited, timeout]);
}

/** Runs the load generator once and answers its JSON result. */
function loadGenerator(url, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [weirBin, "bench", url, "--json", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      out += chunk;
    });
    child.once("close", (code) => {
      let result;
      try {
        result = JSON.parse(out.trim().split("\n").pop());
      } catch {
        return reject(new Error(`weir bench ${args.join(" ")} printed no JSON (exit ${code}): ${out}`));
      }
      if (code !== 0)
        return reject(new Error(`weir bench ${args.join(" ")} failed (exit ${code}): ${out.trim()}`));
      resolve(result);
    });
  });
}

/**
 * The measured phases. Each runs ROUNDS times per server, the two servers taking turns (the
 * order flips every round), so that a slow spell of this shared machine weighs on both alike;
 * every figure is the median of its rounds. Full pulls come first, while the table holds just
 * the seeded rows; pushes add rows, so they come last. `real` phases run against the weir
 * server of the todo example's config (the baseline serves both).
 */
/** The load generator's push phase: every client pushing for the phase's length. */
const pushArgs = () => [
  "--mode",
  "push",
  "-c",
  String(CLIENTS),
  "-m",
  String(MUTATIONS_PER_PUSH),
  "-d",
  String(PHASE_SECONDS),
];

const PHASES = [
  {
    name: "fullPull",
    label: "full pull",
    args: () => ["--mode", "full-pull", "--repeat", "3"],
  },
  {
    name: "pull",
    label: `caught-up pulls, ${CLIENTS} clients, ${PHASE_SECONDS} s`,
    args: () => ["--mode", "pull", "-c", String(CLIENTS), "-d", String(PHASE_SECONDS)],
  },
  {
    name: "push",
    label: `pushes, ${CLIENTS} clients x ${MUTATIONS_PER_PUSH} mutations, ${PHASE_SECONDS} s`,
    args: () => pushArgs(),
  },
  {
    name: "realPush",
    real: true,
    label: `pushes through the todo config, ${CLIENTS} clients x ${MUTATIONS_PER_PUSH} createTodo, ${PHASE_SECONDS} s`,
    args: () => [...pushArgs(), "--mutator", "createTodo", "--args", TODO_ARGS],
  },
];

async function measure(baseline, weir, weirTodo) {
  const runs = Object.fromEntries(
    [baseline, weir, weirTodo].map((server) => [
      server.name,
      Object.fromEntries(PHASES.map((phase) => [phase.name, []])),
    ]),
  );
  for (const server of [baseline, weir]) {
    log(`bench node: ${server.name}: seeding ${FULL_PULL_ROWS.toLocaleString("en-US")} rows`);
    await loadGenerator(server.url, ["--mode", "seed", "--rows", String(FULL_PULL_ROWS)]);
  }
  for (const phase of PHASES) {
    const servers = [baseline, phase.real ? weirTodo : weir];
    // The todo server has served nothing yet (the other was warmed by seeding): one unmeasured
    // round each first, so that both are measured warm.
    if (phase.real) {
      for (const server of servers) {
        log(`bench node: ${server.name}: ${phase.label} (warm-up, not measured)`);
        await loadGenerator(server.url, phase.args());
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        log(`bench node: ${server.name}: ${phase.label} (round ${round + 1}/${ROUNDS})`);
        const result = await loadGenerator(server.url, phase.args());
        runs[server.name][phase.name].push(result);
      }
    }
  }
  return runs;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A server's figures: the median of each over the rounds (`real`: its todo-config rounds). */
function figuresOf(runs, real) {
  return {
    pushMutationsPerSec: round(median(runs.push.map((r) => r.mutationsPerSec))),
    pushP99Ms: median(runs.push.map((r) => r.latency.p99Ms)),
    idlePullsPerSec: round(median(runs.pull.map((r) => r.pullsPerSec))),
    fullPullRowsPerSec: round(median(runs.fullPull.map((r) => r.rowsPerSec))),
    realPushMutationsPerSec: round(median(real.realPush.map((r) => r.mutationsPerSec))),
    realPushP99Ms: median(real.realPush.map((r) => r.latency.p99Ms)),
  };
}

/** Resident set size of a process, from /proc where there is one, else from ps. */
function rssMB(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (match) return Math.round(Number(match[1]) / 1024);
  } catch {}
  const ps = spawnSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" });
  return Math.round(Number(ps.stdout.trim()) / 1024);
}

const ratio = (a, b) => (b > 0 ? Math.round((a / b) * 100) / 100 : null);
const round = (value) => Math.round(value);

build();
const dir = mkdtempSync(join(tmpdir(), "weir-bench-node-"));
const servers = [];
try {
  const baseline = await startServer(
    "baseline",
    [join(root, "bench/baseline/server.mjs"), "--db", join(dir, "baseline.sqlite")],
    join(dir, "baseline.log"),
  );
  servers.push(baseline);
  const weir = await startServer(
    "weir",
    [
      weirBin,
      "serve",
      "--config",
      join(root, "bench/node/weir.config.mjs"),
      "--port",
      "0",
      "--data-dir",
      join(dir, "weir"),
      "--json",
    ],
    join(dir, "weir.log"),
  );
  servers.push(weir);
  const weirTodo = await startServer(
    "weirTodo",
    [
      weirBin,
      "serve",
      "--config",
      join(root, "bench/node/todo.config.ts"),
      "--port",
      "0",
      "--data-dir",
      join(dir, "weir-todo"),
      "--json",
    ],
    join(dir, "weir-todo.log"),
  );
  servers.push(weirTodo);
  const runs = await measure(baseline, weir, weirTodo);
  await stopServer(baseline);
  await stopServer(weirTodo);
  log(`bench node: weir: wake latency, ${WAKE_SOCKETS} sockets`);
  const wake = await loadGenerator(weir.url, [
    "--mode",
    "wake",
    "--sockets",
    String(WAKE_SOCKETS),
    "--rounds",
    quick ? "5" : "20",
  ]);
  const rss = rssMB(weir.child.pid);
  // Last, in a namespace of its own, so that nothing before runs in the memory it leaves.
  log("bench node: weir: one push of 10,000 mutations");
  const bigPush = await measureBigPush(weir.url.replace(/\/[^/]+$/, "/bench-big-push"), weir.child.pid);
  await stopServer(weir);
  log("bench node: worker threads, one against two");
  const scaling = await measureWorkersScaling({
    serve: (name, workers) =>
      startServer(
        name,
        [
          weirBin,
          "serve",
          "--config",
          join(root, "bench/node/weir.config.mjs"),
          "--port",
          "0",
          "--data-dir",
          join(dir, name),
          "--workers",
          String(workers),
          "--json",
        ],
        join(dir, `${name}.log`),
      ),
    stop: stopServer,
    load: loadGenerator,
    log,
    phaseSeconds: PHASE_SECONDS,
    rounds: ROUNDS,
  });

  const figures = {
    ...figuresOf(runs.weir, runs.weirTodo),
    wakeP95Ms: wake.latency.p95Ms,
    rssMB: rss,
    bigPushMs: bigPush.ms,
    bigPushPeakRssMB: bigPush.peakRssMB,
    workersScaling: scaling.workersScaling,
  };
  const baselineFigures = figuresOf(runs.baseline, runs.baseline);
  const ratios = {
    pushMutationsPerSec: ratio(figures.pushMutationsPerSec, baselineFigures.pushMutationsPerSec),
    idlePullsPerSec: ratio(figures.idlePullsPerSec, baselineFigures.idlePullsPerSec),
    fullPullRowsPerSec: ratio(figures.fullPullRowsPerSec, baselineFigures.fullPullRowsPerSec),
    realPushMutationsPerSec: ratio(figures.realPushMutationsPerSec, baselineFigures.realPushMutationsPerSec),
  };
  // The targets weir is held to on this benchmark.
  const meets = {
    pushMutationsPerSec: ratios.pushMutationsPerSec >= 0.8,
    pushP99Ms: figures.pushP99Ms <= 25,
    idlePullsPerSec: ratios.idlePullsPerSec >= 0.8,
    fullPullRowsPerSec: ratios.fullPullRowsPerSec >= 1.0,
    wakeP95Ms: figures.wakeP95Ms <= 50 && wake.missed === 0,
    realPushMutationsPerSec: ratios.realPushMutationsPerSec >= 1.0,
    realPushP99Ms: figures.realPushP99Ms <= 25,
    workersScaling: figures.workersScaling >= 1.6,
  };

  const rows = [
    [
      "push mutations/s",
      figures.pushMutationsPerSec,
      baselineFigures.pushMutationsPerSec,
      ratios.pushMutationsPerSec,
    ],
    ["push p99 ms", figures.pushP99Ms, baselineFigures.pushP99Ms, ""],
    [
      "todo push mutations/s",
      figures.realPushMutationsPerSec,
      baselineFigures.realPushMutationsPerSec,
      ratios.realPushMutationsPerSec,
    ],
    ["todo push p99 ms", figures.realPushP99Ms, baselineFigures.realPushP99Ms, ""],
    ["caught-up pulls/s", figures.idlePullsPerSec, baselineFigures.idlePullsPerSec, ratios.idlePullsPerSec],
    [
      "full pull rows/s",
      figures.fullPullRowsPerSec,
      baselineFigures.fullPullRowsPerSec,
      ratios.fullPullRowsPerSec,
    ],
    ["wake p95 ms (500 sockets)", figures.wakeP95Ms, "-", ""],
    ["weir RSS MB", figures.rssMB, "-", ""],
    ["10,000-mutation push ms", figures.bigPushMs, "-", ""],
    ["pushes, 8 ns, 2 workers/1", figures.workersScaling, "-", ""],
    ["  peak RSS MB (growth)", `${figures.bigPushPeakRssMB} (+${bigPush.rssGrowthMB})`, "-", ""],
  ];
  const table = [["", "weir", "baseline", "weir/baseline"], ...rows].map((row) =>
    row
      .map((cell, i) =>
        String(typeof cell === "number" ? cell.toLocaleString("en-US") : cell)[
          i === 0 ? "padEnd" : "padStart"
        ](i === 0 ? 26 : 14),
      )
      .join(""),
  );
  console.log(table.join("\n"));
  console.log(
    JSON.stringify({
      suite: "node",
      ...figures,
      wakeMissed: wake.missed,
      // Wakes can reach the sockets before the push's own answer reaches its client: then the
      // figure above is 0 and this one, from sending the push, tells how quickly they came.
      wakeFromSendP95Ms: wake.sincePushSent.p95Ms,
      // A status other than 200 means the server could not take the batch.
      bigPushStatus: bigPush.status,
      bigPushRssGrowthMB: bigPush.rssGrowthMB,
      // Namespaces weir's servers moved to their overflow worker or back during the run, by
      // their logs (a move holds a namespace's requests for a moment).
      overflowMoves: overflowMoves([join(dir, "weir.log"), join(dir, "weir-todo.log")]),
      // Mutations/s of pushes over 8 namespaces with one worker thread and with two.
      workers: scaling,
      ratios,
      baseline: baselineFigures,
      meets,
      settings: {
        clients: CLIENTS,
        mutationsPerPush: MUTATIONS_PER_PUSH,
        phaseSeconds: PHASE_SECONDS,
        rounds: ROUNDS,
        fullPullRows: runs.weir.fullPull[0].rows,
        wakeSockets: WAKE_SOCKETS,
      },
    }),
  );
} finally {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
