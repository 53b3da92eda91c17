// `pnpm bench edge`: the Cloudflare example, bundled by wrangler, in local workerd (Miniflare).
// Requests go to the Worker's own socket, through the router Worker to the namespace's object.
// Prints one line per figure as it is measured, then one JSON object as the last line.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

const here = dirname(fileURLToPath(import.meta.url));
const example = join(here, "..", "..", "..", "examples", "cloudflare");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const WARMUP = 30;

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
const wasmKiB = round(sizeOf(shipped.find((file) => file.endsWith(".wasm"))) / 1024);
console.log(
  `bundle (worker.js + engine.wasm, minified, uncompressed): ${bundleKiB} KiB; engine.wasm ${wasmKiB} KiB`,
);

const mf = new Miniflare({
  host: "127.0.0.1",
  port: 0,
  modules: true,
  scriptPath: join(outdir, "worker.js"),
  modulesRoot: outdir,
  modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
  compatibilityDate: "2026-04-01",
  durableObjects: { WEIR: { className: "SyncObject", useSQLite: true } },
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
const url = (await mf.unsafeGetDirectURL()).toString().replace(/\/$/, "");

async function post(path, user, body) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: user, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (response.status !== 200)
    throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

const nextID = { alice: 1, bob: 1 };
function push(ns, user, todo) {
  return post(`/${ns}/push`, user, {
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
}
const pull = (ns, user, cookie) =>
  post(`/${ns}/pull`, user, { clientGroupID: `g-${user}`, clientID: `c-${user}`, cookie });

async function time(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

// Cold: the first pull of a namespace creates its object and installs the schema.
const coldPullMs = round(await time(() => pull("cold", "alice", null)));
console.log(`cold pull (new object, schema install): ${coldPullMs} ms`);

const ns = "bench";
for (let i = 0; i < 100; i++) await push(ns, "alice", `seed-${i}`);
let cookie = (await pull(ns, "alice", null)).cookie;

// A push acknowledged: one createTodo mutation, committed, answered.
const pushTimes = [];
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  const ms = await time(() => push(ns, "alice", `p-${i}`));
  if (i >= WARMUP) pushTimes.push(ms);
}
// An incremental pull: one new row since the client's cookie (caught up first with the pushes above).
cookie = (await pull(ns, "alice", cookie)).cookie;
const pullTimes = [];
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  await push(ns, "alice", `q-${i}`);
  let answer;
  const ms = await time(async () => {
    answer = await pull(ns, "alice", cookie);
  });
  // Each pull must bring exactly the one new row, or this measures something else.
  if (answer.rowsPatch?.length !== 1)
    throw new Error(`an incremental pull answered ${JSON.stringify(answer)}`);
  cookie = answer.cookie;
  if (i >= WARMUP) pullTimes.push(ms);
}
// A caught-up pull: nothing changed.
const idleTimes = [];
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  const ms = await time(() => pull(ns, "alice", cookie));
  if (i >= WARMUP) idleTimes.push(ms);
}
await mf.dispose();

const result = {
  suite: "edge",
  runtime: "workerd (Miniflare 4.20260426.0), wrangler 4.86.0 bundle, direct socket",
  rounds: ROUNDS,
  pullP50Ms: p(pullTimes, 50),
  pullP99Ms: p(pullTimes, 99),
  caughtUpPullP50Ms: p(idleTimes, 50),
  pushAckP50Ms: p(pushTimes, 50),
  pushAckP99Ms: p(pushTimes, 99),
  coldPullMs,
  bundleKiB,
  wasmKiB,
};
console.log(`warm pull of one change: p50 ${result.pullP50Ms} ms, p99 ${result.pullP99Ms} ms`);
console.log(`caught-up pull: p50 ${result.caughtUpPullP50Ms} ms`);
console.log(`push acknowledgement: p50 ${result.pushAckP50Ms} ms, p99 ${result.pushAckP99Ms} ms`);
console.log(JSON.stringify(result));

function p(values, percentile) {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor((percentile / 100) * sorted.length))]);
}

function round(value) {
  return Math.round(value * 100) / 100;
}
