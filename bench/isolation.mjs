#!/usr/bin/env node
// `pnpm bench isolation`: one tenant cannot stall another. A victim in namespace B pulls in a
// loop, alone and then while an attacker in namespace A runs each attack of the queries side:
// the reported slow query, a query no index makes cheap, a desired-query flood on a Zero socket
// (1,000-put frames, and del+put pairs sent without waiting), an argument flood (native pulls of
// queries with 1,000 ids each), a patch flood within the caps (native pulls of 1,000 queries,
// applied in steps), query toggles, new clients' first pulls of every row and a query of a whole
// table, each attack a user of its own with a fresh quota. A first phase is no attack: honest
// clients hydrating a query of every item to its end, which should not move the namespace. Prints a table, then, as the last line,
// one JSON object: the victim's pull p95 alone and under each attack (goal: under 3x alone, no
// error) and what each attack got (statuses, refusals).
//
// The server runs its default worker threads (one per core), and a namespace lives in the worker
// its name hashes to. Two victims pull side by side: one whose namespace shares the attacker's
// worker and, with more than one worker, one whose namespace runs in another; each is reported.
//
// A namespace whose steps pass the step budget moves to the overflow worker (node-host's README):
// each attack reports whether the attacker's namespace was there when its phase ended.
//
//   pnpm bench isolation [--quick] [--only=<attack>,...] [--cpu-prof-dir=<dir>] [--no-overflow]
//     --quick: shorter phases, for a smoke run; --only: just these attacks; --cpu-prof-dir: the
//     server's threads write their CPU profiles there (where a worker's time goes during an
//     attack); --no-overflow: no namespace moves (stepBudgetMs 0), the workers' paging alone
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { ATTACKER, ATTACKS, post, push, SEED_ITEMS } from "./isolation/attacks.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const weirBin = join(root, "packages/cli/dist/weir.js");
const quick = process.argv.includes("--quick");
const PHASE_MS = quick ? 2_000 : 6_000;
const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const only = option("only")?.split(",");
const profileDir = option("cpu-prof-dir");
const noOverflow = process.argv.includes("--no-overflow");
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
  const args = [
    weirBin,
    "serve",
    "--config",
    join(root, `bench/isolation/${noOverflow ? "no-overflow" : "weir"}.config.mjs`),
    "--port",
    "0",
  ];
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

/** The hash the server's logs name a namespace by (host-core's `namespaceHash`). */
function logHash(namespace) {
  return createHash("sha256").update(namespace).digest("hex").slice(0, 16);
}

/**
 * Which of `namespaces` are in the overflow worker, by the server's log of moves so far, how
 * long each move held the requests of the namespace it moved, and when each move since
 * `phaseStart` began (by namespace).
 */
function overflowLog(logFile, namespaces, phaseStart) {
  const byHash = new Map(namespaces.map((ns) => [logHash(ns), ns]));
  const there = new Set();
  const moveMs = new Map();
  const movedAfterMs = new Map();
  for (const line of readFileSync(logFile, "utf8").split("\n")) {
    if (!line.includes('"msg":"namespace moved')) continue;
    const entry = JSON.parse(line);
    const ns = byHash.get(entry.ns);
    if (ns === undefined) continue;
    if (entry.msg === "namespace moved to the overflow worker") there.add(ns);
    else if (entry.msg === "namespace moved back to its worker") there.delete(ns);
    moveMs.set(ns, [...(moveMs.get(ns) ?? []), entry.moveMs]);
    // When the move began (it logs once done), from the phase's start.
    const began = Date.parse(entry.time) - entry.drainMs - entry.moveMs - phaseStart;
    if (began >= 0)
      movedAfterMs.set(ns, [...(movedAfterMs.get(ns) ?? []), { afterMs: began, drainMs: entry.drainMs }]);
  }
  return { there, moveMs, movedAfterMs };
}

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
    const result = { suite: "isolation", workers: server.workers, overflow: !noOverflow, placements: {} };
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
        "",
      ]);
    }
    result.attacks = {};
    for (const [name, attack] of Object.entries(ATTACKS)) {
      if (only && !only.includes(name)) continue;
      log(`bench isolation: ${name}: ${attack.label}`);
      const phaseStart = Date.now();
      const until = phaseStart + PHASE_MS;
      const [victims, attacker] = await Promise.all([
        victimsLoop(url, placements, until),
        inWorker(name, url, until),
      ]);
      // The attacker's last request may end after the phase; the victims are measured within it.
      // The log is written in batches at most 50 ms apart.
      await sleep(100);
      const {
        there: moved,
        moveMs,
        movedAfterMs,
      } = overflowLog(join(dir, "weir.log"), [ATTACKER, ...Object.values(placements)], phaseStart);
      result.attacks[name] = {
        ...attacker,
        attackerInOverflow: moved.has(ATTACKER),
        // How long each of the attacker's moves so far held its requests.
        attackerMoveMs: moveMs.get(ATTACKER) ?? [],
        // When its moves of this phase began, in ms from the phase's start, and how long each
        // waited for its requests out.
        attackerMovedAfterMs: movedAfterMs.get(ATTACKER) ?? [],
      };
      for (const ns of Object.values(placements))
        if (moved.has(ns)) log(`bench isolation: victim "${ns}" is in the overflow worker`);
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
          moved.has(ATTACKER) ? "overflow" : "home",
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
    console.log(
      ["victim", "phase", "pulls", "p95 ms", "x alone", "errors", "attacker in", "attacker got"].join("\t"),
    );
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
