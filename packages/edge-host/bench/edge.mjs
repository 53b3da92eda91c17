// `pnpm bench edge`: the Cloudflare example, bundled by wrangler, in local workerd (Miniflare).
// Requests go to the Worker's own socket, through the router Worker to the namespace's object.
// Prints one line per figure as it is measured, then one JSON object as the last line.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { engineWasmUrl, leanEngineWasmUrl } from "@weir/engine-wasm";
import { Miniflare } from "miniflare";

const here = dirname(fileURLToPath(import.meta.url));
const example = join(here, "..", "..", "..", "examples", "cloudflare");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARMUP = 30;
const COLD_NAMESPACES = 15;

const outdir = mkdtempSync(join(tmpdir(), "weir-bench-edge-"));
const wrangler = spawnSync("pnpm", ["exec", "wrangler", "deploy", "--dry-run", "--outdir", outdir], {
  cwd: example,
  encoding: "utf8",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
});
if (wrangler.status !== 0) {
  console.error(wrangler.stdout, wrangler.stderr);
  process.exit(1);
}
const shipped = readdirSync(outdir).filter((file) => !file.endsWith(".map") && !file.endsWith(".md"));
const sizeOf = (file) => statSync(join(outdir, file)).size;
const bundleKiB = round(shipped.reduce((sum, file) => sum + sizeOf(file), 0) / 1024);
// Both builds of the engine, whichever the example's Worker ships (the lean entry: the lean one).
const wasmKiB = round(statSync(fileURLToPath(engineWasmUrl)).size / 1024);
const leanWasmKiB = round(statSync(fileURLToPath(leanEngineWasmUrl)).size / 1024);
const shippedWasm = shipped.filter((file) => file.endsWith(".wasm"));
console.log(
  `bundle (worker.js + ${shippedWasm.join(" + ")}, minified, uncompressed): ${bundleKiB} KiB; ` +
    `engine.wasm ${wasmKiB} KiB, engine-lean.wasm ${leanWasmKiB} KiB`,
);

// Objects keep their databases here, so a second workerd can wake them from storage.
const persist = mkdtempSync(join(tmpdir(), "weir-bench-edge-storage-"));

const weirWorker = {
  scriptPath: join(outdir, "worker.js"),
  modulesRoot: outdir,
  modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
  durableObjects: { WEIR: { className: "SyncObject", useSQLite: true } },
};
const floorWorker = {
  scriptPath: join(here, "platform-floor.js"),
  modulesRoot: here,
  durableObjects: { STORE: { className: "Store", useSQLite: true } },
};

/** A workerd running a Worker, and a client holding one kept-alive connection to it. */
async function start(worker = weirWorker) {
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    modules: true,
    ...worker,
    compatibilityDate: "2026-04-01",
    durableObjectsPersist: persist,
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
    // workerd blocks once a pipe it logs to is full: read what it says (and show it when debugging).
    handleRuntimeStdio(stdout, stderr) {
      for (const stream of [stdout, stderr]) {
        if (process.env.BENCH_DEBUG) stream.pipe(process.stderr);
        else stream.resume();
      }
    },
  });
  await mf.ready;
  const url = new URL(await mf.unsafeGetDirectURL());
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // The Worker's first request loads its code; every figure below is for a loaded Worker.
  if (worker === weirWorker) await post(url, agent, "/warmup/pull", undefined, {}, 401);
  return { mf, url, agent };
}

/**
 * One request and its parsed answer. node:http rather than fetch: Node's fetch spends ~0.3 ms of
 * its own on each request here, which would be measured as the server's.
 */
function post(url, agent, path, user, body, expected = 200) {
  const data = JSON.stringify(body);
  const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(data) };
  if (user) headers.authorization = user;
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path, method: "POST", agent, headers },
      (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          if (response.statusCode !== expected) {
            reject(new Error(`${path} answered ${response.statusCode}: ${text}`));
          } else resolve(JSON.parse(text));
        });
      },
    );
    request.on("error", reject);
    request.end(data);
  });
}

let server = await start();
// Runs beside weir's workerd and takes its turn in every round (see platform-floor.js).
const floor = await start(floorWorker);
const platformWrite = (body) => post(floor.url, floor.agent, "/write", undefined, body);
const nextID = { alice: 1 };
const push = (ns, user, todo) =>
  post(server.url, server.agent, `/${ns}/push`, user, {
    clientGroupID: `g-${user}`,
    pushVersion: 1,
    mutations: [
      {
        type: "custom",
        id: nextID[user]++,
        clientID: `c-${user}`,
        name: "createTodo",
        args: [{ id: todo, text: "a todo", done: false, sort: 1 }],
        timestamp: Date.now(),
      },
    ],
  });
const pull = (ns, user, cookie) =>
  post(server.url, server.agent, `/${ns}/pull`, user, {
    clientGroupID: `g-${user}`,
    clientID: `c-${user}`,
    cookie,
  });

async function time(fn) {
  const started = performance.now();
  const answer = await fn();
  return { ms: performance.now() - started, answer };
}

// Cold: the first pull of a namespace creates its object and installs the schema. Each takes
// turns with the platform's first write to a new object of its own (platform-floor.js), what
// any cold start pays here.
const coldTimes = [];
const coldFloorTimes = [];
for (let i = 0; i < COLD_NAMESPACES; i++) {
  coldTimes.push((await time(() => pull(`cold-${i}`, "alice", null))).ms);
  coldFloorTimes.push(
    (await time(() => post(floor.url, floor.agent, `/write?object=cold-${i}`, undefined, {}))).ms,
  );
}
console.log(`cold pull (new object, schema install): p50 ${p(coldTimes, 50)} ms of ${COLD_NAMESPACES}`);
console.log(`the platform's first write to a new object: p50 ${p(coldFloorTimes, 50)} ms`);

const ns = "bench";
for (let i = 0; i < 100; i++) await push(ns, "alice", `seed-${i}`);
let cookie = (await pull(ns, "alice", null)).cookie;

// Rounds of four, so that a slow spell of the machine weighs on every figure alike: a push
// acknowledged (one createTodo mutation, committed, answered); an incremental pull that brings
// that one row; a caught-up pull with the cookie it answered; the platform's bare write.
const pushTimes = [];
const pullTimes = [];
const idleTimes = [];
const floorTimes = [];
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  const pushed = await time(() => push(ns, "alice", `p-${i}`));
  const pulled = await time(() => pull(ns, "alice", cookie));
  // Each pull must bring exactly the one new row, or this measures something else.
  if (pulled.answer.rowsPatch?.length !== 1) {
    throw new Error(`an incremental pull answered ${JSON.stringify(pulled.answer)}`);
  }
  cookie = pulled.answer.cookie;
  const idle = await time(() => pull(ns, "alice", cookie));
  if (idle.answer.unchanged !== true)
    throw new Error(`a caught-up pull answered ${JSON.stringify(idle.answer)}`);
  const bare = await time(() => platformWrite({ id: `p-${i}`, text: "a todo", done: false, sort: 1 }));
  if (i < WARMUP) continue;
  pushTimes.push(pushed.ms);
  pullTimes.push(pulled.ms);
  idleTimes.push(idle.ms);
  floorTimes.push(bare.ms);
}
await server.mf.dispose();
await floor.mf.dispose();

// Woken: a new workerd on the same storage; the first pull of each namespace finds its object
// evicted, so it starts the object and opens its database.
server = await start();
const wakeTimes = [];
for (let i = 0; i < COLD_NAMESPACES; i++)
  wakeTimes.push((await time(() => pull(`cold-${i}`, "alice", null))).ms);
console.log(`pull that wakes an evicted object: p50 ${p(wakeTimes, 50)} ms of ${COLD_NAMESPACES}`);
await server.mf.dispose();

const result = {
  suite: "edge",
  runtime: "workerd (Miniflare 4.20260426.0), wrangler 4.86.0 bundle, direct socket, node:http client",
  rounds: ROUNDS,
  pullP50Ms: p(pullTimes, 50),
  pullP99Ms: p(pullTimes, 99),
  caughtUpPullP50Ms: p(idleTimes, 50),
  pushAckP50Ms: p(pushTimes, 50),
  pushAckP99Ms: p(pushTimes, 99),
  platformWriteP50Ms: p(floorTimes, 50),
  coldPullP50Ms: p(coldTimes, 50),
  platformColdWriteP50Ms: p(coldFloorTimes, 50),
  wakePullP50Ms: p(wakeTimes, 50),
  bundleKiB,
  wasmKiB,
  leanWasmKiB,
};
console.log(`warm pull of one change: p50 ${result.pullP50Ms} ms, p99 ${result.pullP99Ms} ms`);
console.log(`caught-up pull: p50 ${result.caughtUpPullP50Ms} ms`);
console.log(`push acknowledgement: p50 ${result.pushAckP50Ms} ms, p99 ${result.pushAckP99Ms} ms`);
console.log(
  `the platform's bare acknowledged write (platform-floor.js): p50 ${result.platformWriteP50Ms} ms`,
);
console.log(JSON.stringify(result));

function p(values, percentile) {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor((percentile / 100) * sorted.length))]);
}

function round(value) {
  return Math.round(value * 100) / 100;
}
