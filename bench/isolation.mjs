#!/usr/bin/env node
// `pnpm bench isolation`: one tenant cannot stall another. A victim in namespace B pulls in a
// loop, alone and then while an attacker in namespace A runs each attack of the queries side:
// the reported slow query, a query no index makes cheap, a desired-query flood on a Zero socket
// (1,000-put frames, and del+put pairs sent without waiting), an argument flood (native pulls of
// queries with 1,000 ids each), a patch flood within the caps (native pulls of 1,000 queries,
// applied in steps) and query toggles, each attack a user of its own with a fresh quota. Prints a
// table, then, as the last line, one JSON object: the victim's pull p95 alone and under each
// attack (goal: under 3x alone, no error) and what each attack got (statuses, refusals).
//
// The server runs its default worker threads (one per core), and a namespace lives in the worker
// its name hashes to. Two victims pull side by side: one whose namespace shares the attacker's
// worker and, with more than one worker, one whose namespace runs in another; each is reported.
//
//   pnpm bench isolation [--quick] [--only=<attack>,...] [--cpu-prof-dir=<dir>]
//     --quick: shorter phases, for a smoke run; --only: just these attacks; --cpu-prof-dir: the
//     server's threads write their CPU profiles there (where a worker's time goes during an attack)
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// The server's own WebSocket library, as a client.
const WebSocket = createRequire(join(root, "packages/node-host/package.json"))("ws");
const weirBin = join(root, "packages/cli/dist/weir.js");
const ATTACKER = "attack";
const quick = process.argv.includes("--quick");
const PHASE_MS = quick ? 2_000 : 6_000;
const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const only = option("only")?.split(",");
const profileDir = option("cpu-prof-dir");
const SEED_ITEMS = 20_000;
const VICTIM_ROWS = 100;
const VICTIM_PAUSE_MS = 10;

function log(line) {
  process.stderr.write(`${line}\n`);
}

function build() {
  log("bench isolation: building @weir/cli and its dependencies (cached when up to date)");
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
    log("bench isolation: the build failed");
    process.exit(1);
  }
}

async function startServer(dir) {
  const logFile = join(dir, "weir.log");
  const fd = openSync(logFile, "w");
  const args = [weirBin, "serve", "--config", join(root, "bench/isolation/weir.config.mjs"), "--port", "0"];
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, ...args, "--data-dir", join(dir, "data"), "--json"], {
    cwd: root,
    stdio: ["ignore", fd, "inherit"],
  });
  closeSync(fd);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  for (let waited = 0; waited < 30_000; waited += 50) {
    const line = readFileSync(logFile, "utf8")
      .split("\n")
      .find((l) => l.startsWith('{"url":'));
    if (line) {
      const { url, workers } = JSON.parse(line);
      return { child, exited, url, workers, dataDir: join(dir, "data") };
    }
    await sleep(50);
  }
  child.kill("SIGKILL");
  throw new Error("weir did not print its URL within 30 s");
}

async function post(url, path, user, body) {
  const response = await fetch(`${url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, json };
}

function push(url, ns, user, group, id, name, args) {
  return post(url, `${ns}/push`, user, {
    clientGroupID: group,
    pushVersion: 1,
    mutations: [{ type: "custom", id, clientID: `${group}-c`, name, args: [args], timestamp: 1 }],
  });
}

let groups = 0;
// Each attack runs in a worker of its own: its groups are named after it.
const freshGroup = (prefix) => `${workerData?.name ?? "main"}-${prefix}-${++groups}`;
// Each attack is a user of its own, whose request quota is fresh: an attack refused by its quota
// is measured from a full one, not from what the attacks before it spent.
const attacker = () => `mallory-${workerData?.name ?? "seed"}`;

/**
 * The victims' namespaces: one in the attacker's worker and, with more than one worker, one in
 * another, chosen by the host's own rule of which worker runs a namespace.
 */
async function victimPlacements(workers) {
  if (workers < 2) return { sameWorker: "victim" };
  const { namespaceWorker } = await import(
    pathToFileURL(join(root, "packages/node-host/dist/index.js")).href
  );
  const attacker = namespaceWorker(ATTACKER, workers);
  const placements = {};
  for (let i = 0; !(placements.sameWorker && placements.otherWorker); i++) {
    const name = i === 0 ? "victim" : `victim${i}`;
    const key = namespaceWorker(name, workers) === attacker ? "sameWorker" : "otherWorker";
    placements[key] ??= name;
  }
  return placements;
}

/** A victim: pulls of its namespace (a reset of its small table each), one after another. */
async function victimLoop(url, ns, until) {
  const times = [];
  let errors = 0;
  while (Date.now() < until) {
    const started = performance.now();
    try {
      const answer = await post(url, `${ns}/pull`, "victor", {
        clientGroupID: "victim-g",
        clientID: "victim-c",
        cookie: null,
      });
      if (answer.status !== 200) errors++;
    } catch {
      errors++;
    }
    times.push(performance.now() - started);
    await sleep(VICTIM_PAUSE_MS);
  }
  return { times, errors };
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round1 = (n) => Math.round(n * 10) / 10;

/** Counts outcomes by a label. */
function tally() {
  const counts = {};
  return {
    counts,
    add(label) {
      counts[label] = (counts[label] ?? 0) + 1;
    },
  };
}

function statusLabel(answer) {
  return answer.status === 200 ? "200" : `${answer.status} ${answer.json?.error ?? ""}`.trim();
}

/** A native query-aware pull that puts `patch` in a new group each time, in a loop. */
async function pullAttack(url, until, patch) {
  const outcome = tally();
  while (Date.now() < until) {
    try {
      outcome.add(
        statusLabel(
          await post(url, `${ATTACKER}/pull`, attacker(), {
            clientGroupID: freshGroup("a"),
            clientID: "a-c",
            cookie: null,
            queries: { patch: patch() },
          }),
        ),
      );
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/** One Zero socket of the attacker, with what it was told. */
function zeroSocket(url) {
  const init = ["initConnection", { desiredQueriesPatch: [] }];
  const protocol = encodeURIComponent(
    Buffer.from(JSON.stringify({ initConnectionMessage: init, authToken: attacker() })).toString("base64"),
  );
  const group = freshGroup("z");
  const query = `clientID=${group}-c&clientGroupID=${group}&baseCookie=&lmid=0&wsid=w1`;
  const ws = new WebSocket(`${url.replace("http", "ws")}/${ATTACKER}/sync/v51/connect?${query}`, protocol);
  const outcome = tally();
  let pokes = 0;
  ws.on("message", (data) => {
    const [type, body] = JSON.parse(data.toString());
    if (type === "pokeEnd") pokes++;
    else if (type === "transformError")
      outcome.add(`transformError ${body[0]?.message?.split(":")[0]?.slice(0, 60)}`);
    else if (type === "error") outcome.add(`error ${body.kind}`);
  });
  const closed = new Promise((resolve) => ws.on("close", resolve));
  const opened = new Promise((resolve, reject) => {
    ws.on("open", resolve);
    ws.on("error", reject);
  });
  return { ws, outcome, opened, closed, pokes: () => pokes };
}

/**
 * Runs `attack` on one attacker socket after another (a socket the server closed is replaced)
 * until `until`; answers what the sockets were told.
 */
async function onSockets(url, until, attack) {
  const outcome = tally();
  while (Date.now() < until) {
    const socket = zeroSocket(url);
    try {
      await socket.opened;
    } catch {
      outcome.add("connect failed");
      continue;
    }
    let open = true;
    socket.closed.then(() => {
      open = false;
    });
    await attack(socket, () => open && Date.now() < until, outcome);
    socket.ws.close();
    for (const [label, count] of Object.entries(socket.outcome.counts))
      for (let i = 0; i < count; i++) outcome.add(label);
  }
  return outcome.counts;
}

/** Frames of 1,000 puts each (new queries every frame), each sent once the last was answered. */
function putFlood(url, until) {
  let next = 0;
  const heard = (socket) => socket.pokes() + Object.values(socket.outcome.counts).reduce((a, b) => a + b, 0);
  return onSockets(url, until, async (socket, going, outcome) => {
    while (going()) {
      const seen = heard(socket);
      const patch = Array.from({ length: 1000 }, () => {
        const n = next++;
        return { op: "put", hash: `p${n}`, name: "allItems", args: [n] };
      });
      socket.ws.send(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: patch }]));
      outcome.add("frames");
      while (going() && heard(socket) === seen) await sleep(5);
    }
  });
}

/** 200 del+put pairs of one query sent at once, then again once a poke came. */
function toggleFlood(url, until) {
  const put = { op: "put", hash: "slow", name: "tagged", args: ["nothing"] };
  const frame = (op) => JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: [op] }]);
  return onSockets(url, until, async (socket, going, outcome) => {
    socket.ws.send(frame(put));
    while (going()) {
      for (let i = 0; i < 200; i++) {
        socket.ws.send(frame({ op: "del", hash: "slow" }));
        socket.ws.send(frame(put));
      }
      outcome.add("pairs sent (200)");
      const before = socket.pokes();
      while (going() && socket.pokes() === before) await sleep(5);
    }
  });
}

/** Native pulls of one group toggling a query, each from the last answer's cookie. */
async function toggles(url, until) {
  const outcome = tally();
  let cookie = null;
  let on = false;
  while (Date.now() < until) {
    on = !on;
    const patch = on ? [{ op: "put", hash: "t", name: "allItems", args: [] }] : [{ op: "del", hash: "t" }];
    const answer = await post(url, `${ATTACKER}/pull`, attacker(), {
      clientGroupID: "toggler",
      clientID: "toggler-c",
      cookie,
      queries: { patch },
    });
    outcome.add(statusLabel(answer));
    if (answer.status === 200) cookie = answer.json.cookie;
  }
  return outcome.counts;
}

/** `count` puts of `byIds`, each of `ids` ids (`id(query, i)`), hashed `<prefix><query>`. */
function byIdsPatch(prefix, count, ids, id) {
  return Array.from({ length: count }, (_, q) => ({
    op: "put",
    hash: `${prefix}${q}`,
    name: "byIds",
    args: Array.from({ length: ids }, (_, i) => id(q, i)),
  }));
}

const ATTACKS = {
  slowQuery: {
    label: "the reported query (EXISTS on tag.itemId, no match), a new group each pull",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "q", name: "tagged", args: ["nothing"] }]),
  },
  heavyQuery: {
    label: "an EXISTS no index serves (every probe reads every tag)",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "h", name: "sameKind", args: ["zzz%"] }]),
  },
  putFlood: { label: "Zero changeDesiredQueries frames of 1,000 puts", run: putFlood },
  toggleFlood: { label: "Zero del+put pairs of one query, 200 at a time", run: toggleFlood },
  argumentFlood: {
    label: "native pulls of 300 queries of 1,000 ids each",
    run: (url, until) => pullAttack(url, until, () => byIdsPatch("b", 300, 1000, (q, i) => `id-${q}-${i}`)),
  },
  patchFlood: {
    label: "native pulls of 1,000 queries of 30 ids each (within the caps: applied in steps)",
    run: (url, until) =>
      pullAttack(url, until, () =>
        byIdsPatch("p", 1000, 30, (q, i) => `i${String((q * 30 + i) % SEED_ITEMS).padStart(6, "0")}`),
      ),
  },
  queryToggles: { label: "native pulls toggling one query", run: toggles },
};

/** A victim's figures over one phase, against its pulls alone. */
function victimFigures(victim, baselineP95) {
  const p95 = percentile(victim.times, 95);
  return {
    victimP95Ms: round1(p95),
    victimMaxMs: round1(Math.max(...victim.times)),
    ratio: round1(p95 / baselineP95),
    victimPulls: victim.times.length,
    victimErrors: victim.errors,
  };
}

/** Every victim pulls at once until `until`: answers each one's loop by placement. */
async function victimsLoop(url, placements, until) {
  const names = Object.keys(placements);
  const loops = await Promise.all(names.map((name) => victimLoop(url, placements[name], until)));
  return Object.fromEntries(names.map((name, i) => [name, loops[i]]));
}

async function main() {
  build();
  const dir = mkdtempSync(join(tmpdir(), "weir-bench-isolation-"));
  const server = await startServer(dir);
  const { url } = server;
  const placements = await victimPlacements(server.workers);
  try {
    log(`bench isolation: seeding ${SEED_ITEMS.toLocaleString("en-US")} items and twice as many tags`);
    const seeded = await push(url, ATTACKER, "mallory", "seed-g", 1, "seed", { items: SEED_ITEMS });
    if (seeded.status !== 200) throw new Error(`seeding answered ${seeded.status}`);
    for (const ns of Object.values(placements))
      for (let i = 0; i < VICTIM_ROWS; i++)
        await push(url, ns, "victor", "victim-w", i + 1, "note", { id: `v${i}` });
    await victimsLoop(url, placements, Date.now() + 500);
    log(
      `bench isolation: ${server.workers} workers; the victims alone: ${Object.entries(placements)
        .map(([placement, ns]) => `${placement} "${ns}"`)
        .join(", ")}`,
    );
    const alone = await victimsLoop(url, placements, Date.now() + PHASE_MS);
    const result = { suite: "isolation", workers: server.workers, placements: {} };
    const rows = [];
    const baselines = {};
    for (const [placement, ns] of Object.entries(placements)) {
      baselines[placement] = percentile(alone[placement].times, 95);
      result.placements[placement] = {
        namespace: ns,
        victimAloneP95Ms: round1(baselines[placement]),
        victimAlonePulls: alone[placement].times.length,
        attacks: {},
      };
      rows.push([
        placement,
        "alone",
        alone[placement].times.length,
        round1(baselines[placement]),
        "",
        alone[placement].errors,
        "",
      ]);
    }
    result.attacks = {};
    for (const [name, attack] of Object.entries(ATTACKS)) {
      if (only && !only.includes(name)) continue;
      log(`bench isolation: ${name}: ${attack.label}`);
      const until = Date.now() + PHASE_MS;
      const [victims, attacker] = await Promise.all([
        victimsLoop(url, placements, until),
        inWorker(name, url, until),
      ]);
      // The attacker's last request may end after the phase; the victims are measured within it.
      result.attacks[name] = attacker;
      for (const placement of Object.keys(placements)) {
        const figures = victimFigures(victims[placement], baselines[placement]);
        result.placements[placement].attacks[name] = figures;
        rows.push([
          placement,
          name,
          figures.victimPulls,
          figures.victimP95Ms,
          figures.ratio,
          figures.victimErrors,
          JSON.stringify(attacker),
        ]);
      }
    }
    result.attackFileMB = round1(statSync(join(server.dataDir, `${ATTACKER}.sqlite`)).size / 1048576);
    for (const placement of Object.values(result.placements))
      placement.worstRatio = Math.max(...Object.values(placement.attacks).map((a) => a.ratio));
    // What the server logged as errors (a failure, not a refusal), which no attack should cause.
    const errors = readFileSync(join(dir, "weir.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes('"level":"error"'));
    for (const line of errors.slice(0, 5)) log(`bench isolation: server error: ${line.slice(0, 400)}`);
    result.serverErrors = errors.length;
    result.victimErrors = Object.values(result.placements)
      .flatMap((placement) => Object.values(placement.attacks))
      .reduce((sum, a) => sum + a.victimErrors, 0);
    console.log(["victim", "phase", "pulls", "p95 ms", "x alone", "errors", "attacker"].join("\t"));
    for (const row of rows) console.log(row.join("\t"));
    console.log(JSON.stringify(result));
  } finally {
    server.child.kill("SIGTERM");
    await Promise.race([server.exited, sleep(10_000).then(() => server.child.kill("SIGKILL"))]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs an attack in a worker thread: building and reading its big frames must not delay the
 * victim's timings in this one.
 */
function inWorker(name, url, until) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { name, url, until } });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

if (isMainThread) await main();
else parentPort.postMessage(await ATTACKS[workerData.name].run(workerData.url, workerData.until));
