#!/usr/bin/env node
// `pnpm bench ingest`: upstream ingest on the Node host (file storage) from the shipped upstream
// server (@weir/upstream on SQLite) over loopback HTTP, each server in a process of its own, and
// the same passes through the engine in this process. Prints a table on stderr, then, as the
// last line, one JSON object. Run a build first (`pnpm build`).
//
//   pnpm bench ingest [--quick] [--snapshot-rows N] [--changes N] [--rounds N] [--wake-rounds N]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { sqliteUpstream } from "@weir/upstream";
import WebSocket from "ws";
import { inProcessIngester } from "./ingest/in-process.mjs";
import { ADMIN_KEY, NAMESPACE, NOTIFY_TOKEN, SCHEMA } from "./ingest/schema.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
function numberArg(name, fallback) {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) {
    process.stderr.write(`bench ingest: ${name} expects a positive integer\n`);
    process.exit(2);
  }
  return value;
}
const SNAPSHOT_ROWS = numberArg("--snapshot-rows", 100_000);
const BATCH = 1_000;
/** Changes per measured pass, in upstream transactions of BATCH changes each. */
const CHANGES = Math.max(1, Math.round(numberArg("--changes", quick ? 20_000 : 50_000) / 1_000)) * 1_000;
const ROUNDS = numberArg("--rounds", quick ? 1 : 3);
const WAKE_ROUNDS = numberArg("--wake-rounds", quick ? 10 : 40);
const WARMUP_BATCHES = 5;

function log(line) {
  process.stderr.write(`${line}\n`);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round1 = (value) => Math.round(value * 10) / 10;

/** Starts `node <script> ...` and waits for its {"url"} line. */
function startProcess(script, scriptArgs) {
  const child = spawn(process.execPath, [join(here, "ingest", script), ...scriptArgs], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${script} printed no URL within 30 s`)), 30_000);
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith('{"url":'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, exited, url: JSON.parse(line).url });
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before listening`));
    });
  });
}

async function stopProcess(server) {
  server.child.kill("SIGTERM");
  const timeout = sleep(10_000).then(() => server.child.kill("SIGKILL"));
  await Promise.race([server.exited, timeout]);
}

// The upstream's data, written from this process's own connection (its triggers capture writes
// from any connection), each transaction published as one watermark as an app's commit would be.
const dir = mkdtempSync(join(tmpdir(), "weir-bench-ingest-"));
const upstream = sqliteUpstream({ file: join(dir, "upstream.sqlite"), schema: SCHEMA });
const idOf = (n) => `todo-${String(n).padStart(7, "0")}`;
const titleOf = (n, edit) => `Todo number ${n}, edited ${edit} times, with some words`;
let edits = 0;
let nextUpdate = 0;

function seed(rows) {
  const insert = upstream.db.prepare(
    "INSERT INTO todo (id, owner, title, done, sort) VALUES (?, ?, ?, ?, ?)",
  );
  upstream.db.transaction(() => {
    for (let n = 0; n < rows; n++)
      insert.run(idOf(n), `user-${n % 50}`, titleOf(n, 0), n % 3 === 0 ? 1 : 0, n * 1.5);
  })();
  upstream.publish();
}

const update = upstream.db.prepare("UPDATE todo SET title = ?, done = ?, sort = ? WHERE id = ?");
/** `batches` upstream transactions of BATCH updates to distinct rows each, each its own watermark. */
function writeBatches(batches) {
  const batch = upstream.db.transaction(() => {
    edits++;
    for (let i = 0; i < BATCH; i++) {
      const n = nextUpdate++ % SNAPSHOT_ROWS;
      update.run(titleOf(n, edits), edits % 2, n * 1.5 + edits, idOf(n));
    }
  });
  for (let b = 0; b < batches; b++) {
    batch();
    upstream.publish();
  }
}

async function post(url, path, headers, body = {}) {
  const response = await fetch(`${url}/${NAMESPACE}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status !== 200)
    throw new Error(`${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** One admin pass on the server: the rows it applied and its time, as the client sees it. */
async function adminPass(weir, route) {
  const started = performance.now();
  const answer = await post(weir.url, `admin/${route}`, { "x-admin-key": ADMIN_KEY });
  const ms = performance.now() - started;
  if (answer.outcome !== "complete")
    throw new Error(`admin ${route} ended ${answer.outcome}: ${answer.error}`);
  return { rows: answer.rows, ms };
}

function rate(result) {
  return result.rows / (result.ms / 1000);
}

function expectRows(what, result, rows) {
  if (result.rows !== rows) throw new Error(`${what}: applied ${result.rows} rows, not ${rows}`);
}

/** From the upstream's commit to the wake a client's socket receives, through notify. */
async function notifyToWake(weir) {
  const url = `${weir.url.replace(/^http/, "ws")}/${NAMESPACE}/wake?clientID=bench-wake`;
  const ws = new WebSocket(url, { headers: { authorization: "bench" } });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let woken;
  ws.on("message", (data) => {
    if (data.toString() === "wake" && woken) woken();
  });
  const latencies = [];
  for (let round = 0; round < WAKE_ROUNDS + 2; round++) {
    const wake = new Promise((resolve) => {
      woken = resolve;
    });
    const started = performance.now();
    upstream.db.prepare("UPDATE todo SET sort = sort + 1 WHERE id = ?").run(idOf(round % SNAPSHOT_ROWS));
    upstream.publish();
    const notified = post(weir.url, "notify", { authorization: `Bearer ${NOTIFY_TOKEN}` });
    await wake;
    const ms = performance.now() - started;
    await notified;
    if (round >= 2) latencies.push(ms); // two warm-up rounds
    // Past the wake window, so each commit is the first of a quiet period.
    await sleep(50);
  }
  ws.close();
  return latencies;
}

let upstreamServer;
let weir;
let ingester;
try {
  log(`bench ingest: seeding ${SNAPSHOT_ROWS.toLocaleString("en-US")} upstream rows`);
  seed(SNAPSHOT_ROWS);
  upstreamServer = await startProcess("upstream-server.mjs", [join(dir, "upstream.sqlite")]);
  weir = await startProcess("weir-server.mjs", [join(dir, "data"), upstreamServer.url]);

  // Over HTTP: the first pass snapshots the new namespace; later rounds build new generations.
  const snapshots = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result = await adminPass(weir, round === 0 ? "ingest" : "resnapshot");
    expectRows("snapshot over HTTP", result, SNAPSHOT_ROWS);
    snapshots.push(rate(result));
    log(`  http snapshot     round ${round + 1}: ${Math.round(rate(result)).toLocaleString("en-US")} rows/s`);
  }
  writeBatches(WARMUP_BATCHES);
  await adminPass(weir, "ingest");
  const changes = [];
  for (let round = 0; round < ROUNDS; round++) {
    writeBatches(CHANGES / BATCH);
    const result = await adminPass(weir, "ingest");
    expectRows("changes over HTTP", result, CHANGES);
    changes.push(rate(result));
    log(
      `  http changes      round ${round + 1}: ${Math.round(rate(result)).toLocaleString("en-US")} changes/s`,
    );
  }
  const wakes = await notifyToWake(weir);
  log(`  notify to wake    p50 ${round1(percentile(wakes, 50))} ms, p95 ${round1(percentile(wakes, 95))} ms`);
  await stopProcess(weir);
  weir = undefined;

  // In process: the same passes, the upstream read in this process.
  ingester = await inProcessIngester(join(dir, "in-process"), NAMESPACE);
  const localSnapshots = [];
  for (let round = 0; round < ROUNDS; round++) {
    const result = await ingester.pass(upstream, { resnapshot: round > 0 });
    expectRows("snapshot in process", result, SNAPSHOT_ROWS);
    localSnapshots.push(rate(result));
    log(`  local snapshot    round ${round + 1}: ${Math.round(rate(result)).toLocaleString("en-US")} rows/s`);
  }
  writeBatches(WARMUP_BATCHES);
  await ingester.pass(upstream);
  const localChanges = [];
  for (let round = 0; round < ROUNDS; round++) {
    writeBatches(CHANGES / BATCH);
    const result = await ingester.pass(upstream);
    expectRows("changes in process", result, CHANGES);
    localChanges.push(rate(result));
    log(
      `  local changes     round ${round + 1}: ${Math.round(rate(result)).toLocaleString("en-US")} changes/s`,
    );
  }

  const result = {
    suite: "ingest",
    changesPerSec: Math.round(median(changes)),
    snapshotRowsPerSec: Math.round(median(snapshots)),
    notifyToWakeP95Ms: round1(percentile(wakes, 95)),
    notifyToWakeP50Ms: round1(percentile(wakes, 50)),
    inProcessChangesPerSec: Math.round(median(localChanges)),
    inProcessSnapshotRowsPerSec: Math.round(median(localSnapshots)),
    snapshotRows: SNAPSHOT_ROWS,
    changesPerRound: CHANGES,
    batchChanges: BATCH,
    rounds: ROUNDS,
    wakeRounds: WAKE_ROUNDS,
  };
  log("");
  log(`  changes over HTTP      ${result.changesPerSec.toLocaleString("en-US")} /s   (goal >= 50,000)`);
  log(
    `  snapshot over HTTP     ${result.snapshotRowsPerSec.toLocaleString("en-US")} rows/s   (goal >= 50,000)`,
  );
  log(`  notify to wake p95     ${result.notifyToWakeP95Ms} ms   (goal < 50)`);
  log(
    `  changes in process     ${result.inProcessChangesPerSec.toLocaleString("en-US")} /s   (goal >= 100,000)`,
  );
  log(
    `  snapshot in process    ${result.inProcessSnapshotRowsPerSec.toLocaleString("en-US")} rows/s   (goal >= 100,000)`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await ingester?.close();
  if (weir) await stopProcess(weir);
  if (upstreamServer) await stopProcess(upstreamServer);
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
}
