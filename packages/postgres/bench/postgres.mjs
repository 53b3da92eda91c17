#!/usr/bin/env node
// `pnpm bench postgres`: @weir/postgres against a private PostgreSQL cluster (fsync on) on this
// machine. Measures snapshot reads through the contract, how fast committed changes become
// available in /changes, and how long a commit takes to reach the notifier; then, end to end
// through a weir server (lib/end-to-end.mjs), initial sync, changes, commit to wake and delegated
// push. The last line of output is one JSON object with the figures. Run a build first.
// `--no-thread` runs every upstream's reader on the thread that created it (`thread: false`).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { startPostgres } from "@weir/postgres-testing";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { postgresUpstream, serveUpstream } from "../dist/index.js";
import { endToEnd } from "./lib/end-to-end.mjs";

const SNAPSHOT_ROWS = Number(process.env.WEIR_BENCH_SNAPSHOT_ROWS ?? 1_000_000);
const PAGE = 10_000;
const SESSIONS = 4;
const TRANSACTIONS_PER_SESSION = 250;
const ROWS_PER_TRANSACTION = 40;
const NOTIFY_SAMPLES = 200;

const log = (line) => process.stderr.write(`${line}\n`);
const dir = mkdtempSync(join(tmpdir(), "weir-bench-pg-"));
const db = await startPostgres({ privateCluster: true, durable: true });
const results = { readerThread: !process.argv.includes("--no-thread") };

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

try {
  await db.sql(`CREATE TABLE snap (id bigint PRIMARY KEY, org int NOT NULL, title text NOT NULL, n int NOT NULL, at timestamptz NOT NULL);
    ALTER TABLE snap REPLICA IDENTITY FULL;
    CREATE TABLE change (session int, tx int, i int, payload text, PRIMARY KEY (session, tx, i));
    ALTER TABLE change REPLICA IDENTITY FULL;
    CREATE TABLE ping (id int PRIMARY KEY, n int NOT NULL);
    ALTER TABLE ping REPLICA IDENTITY FULL;`);
  log(`loading ${SNAPSHOT_ROWS} rows`);
  await db.sql(
    `INSERT INTO snap SELECT i, i % 100, 'title of row ' || i, i * 7, now() FROM generate_series(1, ${SNAPSHOT_ROWS}) i`,
  );
  await db.sql("VACUUM ANALYZE snap");

  // A wake recorder standing in for weir's notify route.
  const arrivals = [];
  const weir = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrivals.push(performance.now());
      res.end("{}");
    });
  });
  await new Promise((resolve) => weir.listen(0, "127.0.0.1", resolve));

  const upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["snap", "change", "ping"],
    bufferFile: join(dir, "buffer.sqlite"),
    namespaces: ["bench"],
    notify: { url: `http://127.0.0.1:${weir.address().port}` },
    thread: results.readerThread,
  });
  const server = serveUpstream(upstream);
  const { url } = await server.listen();

  // 1. Snapshot: every row through the contract's pages, over HTTP.
  {
    let cursor = null;
    let rows = 0;
    const started = performance.now();
    do {
      const query = `table=snap&limit=${PAGE}${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await (await fetch(`${url}/bench/snapshot?${query}`)).json();
      rows += page.rows.length;
      cursor = page.nextCursor;
    } while (cursor);
    const seconds = (performance.now() - started) / 1000;
    if (rows !== SNAPSHOT_ROWS) throw new Error(`snapshot read ${rows} rows`);
    results.snapshotRowsPerSec = Math.round(rows / seconds);
    log(`snapshot over HTTP: ${results.snapshotRowsPerSec} rows/s`);

    const source = upstream.source("bench");
    const inProcess = performance.now();
    cursor = null;
    do {
      const page = await source.snapshotPage("snap", cursor, PAGE);
      cursor = page.nextCursor;
    } while (cursor);
    results.snapshotInProcessRowsPerSec = Math.round(
      SNAPSHOT_ROWS / ((performance.now() - inProcess) / 1000),
    );
    log(`snapshot in process: ${results.snapshotInProcessRowsPerSec} rows/s`);

    // For comparison: COPY of the same rows as text, not decoded, in one stream.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const copyStarted = performance.now();
    let bytes = 0;
    await pipeline(
      client.query(copyTo("COPY (SELECT id, org, title, n, at FROM snap ORDER BY id) TO STDOUT")),
      new Writable({
        write(chunk, _encoding, callback) {
          bytes += chunk.length;
          callback();
        },
      }),
    );
    results.copyRowsPerSec = Math.round(SNAPSHOT_ROWS / ((performance.now() - copyStarted) / 1000));
    results.copyBytes = bytes;
    await client.end();
    log(`COPY (raw text, not decoded): ${results.copyRowsPerSec} rows/s`);
  }

  // 2. Changes: several sessions commit steadily; measured from the first commit until the
  //    buffer holds every change (and /changes answers them).
  {
    const before = (await upstream.status()).committed.changes;
    const from = BigInt((await upstream.status()).buffer.newestWatermark);
    const total = SESSIONS * TRANSACTIONS_PER_SESSION * ROWS_PER_TRANSACTION;
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        return client;
      }),
    );
    // How long this thread's callbacks wait meanwhile (the thread that created the upstream).
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const started = performance.now();
    let writersDone = 0;
    const writers = clients.map(async (client, session) => {
      for (let tx = 0; tx < TRANSACTIONS_PER_SESSION; tx++) {
        await client.query(
          `INSERT INTO change SELECT $1, $2, i, repeat('x', 40) FROM generate_series(1, ${ROWS_PER_TRANSACTION}) i`,
          [session, tx],
        );
      }
      writersDone = performance.now();
    });
    let buffered = 0;
    for (;;) {
      const { committed } = await upstream.status();
      if (committed.changes - before >= total) {
        buffered = performance.now();
        loopDelay.disable();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(writers);
    await Promise.all(clients.map((client) => client.end()));
    let available = 0;
    let watermark = from;
    for (;;) {
      const page = await upstream.source("bench").changes(watermark, 100_000);
      available += page.changes.length;
      if (page.watermark === watermark) break;
      watermark = page.watermark;
    }
    if (available < total) throw new Error(`/changes answered ${available} of ${total} changes`);
    results.callerLoopDelayP99Ms = Number((loopDelay.percentile(99) / 1e6).toFixed(1));
    results.callerLoopDelayMaxMs = Number((loopDelay.max / 1e6).toFixed(1));
    results.bufferChangesPerSec = Math.round(total / ((buffered - started) / 1000));
    results.postgresCommitChangesPerSec = Math.round(total / ((writersDone - started) / 1000));
    log(
      `changes: ${results.bufferChangesPerSec}/s buffered (PostgreSQL committed ${results.postgresCommitChangesPerSec}/s), the creating thread's event loop delayed p99 ${results.callerLoopDelayP99Ms} ms, max ${results.callerLoopDelayMaxMs} ms`,
    );
  }

  // 3. Commit to notify: one single-row commit at a time, timed from COMMIT's return.
  {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const latencies = [];
    for (let i = 0; i < NOTIFY_SAMPLES; i++) {
      const seen = arrivals.length;
      await client.query("INSERT INTO ping VALUES ($1, $1)", [i]);
      const committed = performance.now();
      while (arrivals.length === seen) await new Promise((resolve) => setImmediate(resolve));
      latencies.push(arrivals[seen] - committed);
    }
    await client.end();
    latencies.sort((a, b) => a - b);
    results.commitToNotifyP50Ms = Number(percentile(latencies, 50).toFixed(2));
    results.commitToNotifyP95Ms = Number(percentile(latencies, 95).toFixed(2));
    log(`commit to notify: p50 ${results.commitToNotifyP50Ms} ms, p95 ${results.commitToNotifyP95Ms} ms`);
  }

  await server.close();
  await upstream.dropReplication();
  weir.close();

  // 4. End to end through a weir server: initial sync, changes, wake, delegated push.
  await endToEnd(db, results, log);
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(JSON.stringify({ suite: "postgres", ...results }));
