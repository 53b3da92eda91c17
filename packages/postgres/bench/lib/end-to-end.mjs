// The end-to-end half of `pnpm bench postgres`: PostgreSQL -> @weir/postgres (in process) -> a
// weir Node server with file storage (a child process) -> clients over HTTP and WebSocket, and
// delegated push through an app server running createPushProcessor (another child process).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { percentile, post, sleep, startChild } from "./processes.mjs";
import { WeirClient } from "./weir-client.mjs";

const env = process.env;
const SYNC_ROWS = Number(env.WEIR_BENCH_SYNC_ROWS ?? 1_000_000);
const SESSIONS = 4;
const TRANSACTIONS_PER_SESSION = Number(env.WEIR_BENCH_FEED_TRANSACTIONS ?? 500);
const ROWS_PER_TRANSACTION = 40;
const WAKE_SAMPLES = 200;
const PUSH_CLIENTS = 32;
const MUTATIONS_PER_PUSH = Number(env.WEIR_BENCH_PUSH_BATCH ?? 8);
const PUSH_SECONDS = Number(env.WEIR_BENCH_PUSH_SECONDS ?? 5);
const ADMIN = { "x-admin-key": "bench-admin-key" };

const round = (value) => Number(value.toFixed(2));

export async function endToEnd(db, results, log) {
  const dir = mkdtempSync(join(tmpdir(), "weir-bench-e2e-"));
  await db.sql(`CREATE TABLE item (ns text, id bigint, title text NOT NULL, n int NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (ns, id));
    CREATE TABLE feed (ns text, session int, tx int, i int, payload text NOT NULL, PRIMARY KEY (ns, session, tx, i));
    CREATE TABLE beat (ns text, id int, n int NOT NULL, PRIMARY KEY (ns, id));
    CREATE TABLE todo (ns text, id text, owner text NOT NULL, title text NOT NULL, PRIMARY KEY (ns, id));
    ALTER TABLE item REPLICA IDENTITY FULL; ALTER TABLE feed REPLICA IDENTITY FULL;
    ALTER TABLE beat REPLICA IDENTITY FULL; ALTER TABLE todo REPLICA IDENTITY FULL;`);
  log(`loading ${SYNC_ROWS} rows for the initial sync`);
  await db.sql(
    `INSERT INTO item SELECT 'sync', i, 'title of row ' || i, i * 7, now() FROM generate_series(1, ${SYNC_ROWS}) i`,
  );
  await db.sql("VACUUM ANALYZE item");

  mkdirSync(join(dir, "data"));
  const app = await startChild("app-server.mjs", { WEIR_BENCH_DATABASE_URL: db.url });
  const weir = await startChild("weir-server.mjs", {
    WEIR_BENCH_DATABASE_URL: db.url,
    WEIR_BENCH_BUFFER: join(dir, "buffer.sqlite"),
    WEIR_BENCH_DATA_DIR: join(dir, "data"),
    WEIR_BENCH_APP_URL: app.url,
    WEIR_BENCH_UPSTREAM_THREAD: results.readerThread ? "1" : "0",
  });
  const pool = new pg.Pool({ connectionString: db.url, max: SESSIONS });
  try {
    await initialSync(weir.url, results, log);
    await changes(weir.url, pool, results, log);
    await commitToWake(weir.url, pool, results, log);
    await delegatedPush(weir, app, results, log);
    await appServerAlone(app.url, results, log);
  } catch (error) {
    log(`weir server:\n${weir.output()}\napp server:\n${app.output()}`);
    throw error;
  } finally {
    await pool.end();
    await weir.stop();
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A million rows into a namespace that never synced: one ingest pass, then a pull shows them. */
async function initialSync(url, results, log) {
  const started = performance.now();
  const pass = await post(`${url}/sync/admin/ingest`, undefined, ADMIN);
  const seconds = (performance.now() - started) / 1000;
  if (pass.outcome !== "complete") throw new Error(`initial sync: ${JSON.stringify(pass)}`);
  const client = new WeirClient(url, "sync");
  const pullStarted = performance.now();
  await client.pull();
  const pullSeconds = (performance.now() - pullStarted) / 1000;
  if (client.count("item") !== SYNC_ROWS) throw new Error(`the pull showed ${client.count("item")} rows`);
  results.initialSyncRowsPerSec = Math.round(SYNC_ROWS / seconds);
  results.initialSyncFirstPullMs = Math.round(pullSeconds * 1000);
  log(
    `initial sync: ${results.initialSyncRowsPerSec} rows/s into the namespace, then the first pull took ${results.initialSyncFirstPullMs} ms`,
  );
}

/** Several sessions commit steadily; timed from the first commit until a client pulled every row. */
async function changes(url, pool, results, log) {
  const client = new WeirClient(url, "live");
  await client.sync();
  let wake = () => {};
  const ws = await client.watch(() => wake());
  const total = SESSIONS * TRANSACTIONS_PER_SESSION * ROWS_PER_TRANSACTION;
  const started = performance.now();
  let committedAt = 0;
  const writers = Array.from({ length: SESSIONS }, async (_, session) => {
    const connection = await pool.connect();
    try {
      for (let tx = 0; tx < TRANSACTIONS_PER_SESSION; tx++) {
        await connection.query(
          `INSERT INTO feed SELECT 'live', $1, $2, i, repeat('x', 40) FROM generate_series(1, ${ROWS_PER_TRANSACTION}) i`,
          [session, tx],
        );
      }
    } finally {
      connection.release();
    }
    committedAt = performance.now();
  });
  // Meanwhile a client of another namespace, which none of these changes reach, pulls every 10 ms:
  // how long its answers wait behind the server's thread (the reader's decoding, when the
  // upstream runs on that thread, and the namespace's ingest).
  const quiet = new WeirClient(url, "quiet");
  await quiet.sync();
  const quietLatencies = [];
  let burstDone = false;
  const prober = (async () => {
    while (!burstDone) {
      const sent = performance.now();
      await quiet.pull();
      quietLatencies.push(performance.now() - sent);
      await sleep(10);
    }
  })();
  while (client.count("feed") < total) {
    const answer = await client.pull();
    if (answer.unchanged) {
      await Promise.race([new Promise((resolve) => (wake = resolve)), sleep(20)]);
    }
  }
  const seen = performance.now();
  burstDone = true;
  await prober;
  await Promise.all(writers);
  ws.close();
  quietLatencies.sort((a, b) => a - b);
  results.quietPullDuringChangesP50Ms = round(percentile(quietLatencies, 50));
  results.quietPullDuringChangesP95Ms = round(percentile(quietLatencies, 95));
  log(
    `another namespace's pulls during the changes: p50 ${results.quietPullDuringChangesP50Ms} ms, p95 ${results.quietPullDuringChangesP95Ms} ms (${quietLatencies.length} pulls)`,
  );
  results.changesPerSec = Math.round(total / ((seen - started) / 1000));
  results.changesPostgresCommitPerSec = Math.round(total / ((committedAt - started) / 1000));
  log(
    `changes: ${results.changesPerSec}/s end to end (PostgreSQL committed ${results.changesPostgresCommitPerSec}/s)`,
  );
}

/** One single-row commit at a time, from COMMIT's return until the wake socket's message. */
async function commitToWake(url, pool, results, log) {
  const client = new WeirClient(url, "wake");
  await client.sync();
  const arrivals = [];
  const ws = await client.watch((at) => arrivals.push(at));
  const latencies = [];
  for (let i = 0; i < WAKE_SAMPLES; i++) {
    const seen = arrivals.length;
    await pool.query("INSERT INTO beat VALUES ('wake', $1, $1)", [i]);
    const committed = performance.now();
    while (arrivals.length === seen) await sleep(0);
    latencies.push(arrivals[seen] - committed);
    // Past the wake window, so each commit is timed alone.
    await sleep(30);
  }
  ws.close();
  latencies.sort((a, b) => a - b);
  results.commitToWakeP50Ms = round(percentile(latencies, 50));
  results.commitToWakeP95Ms = round(percentile(latencies, 95));
  log(`commit to wake: p50 ${results.commitToWakeP50Ms} ms, p95 ${results.commitToWakeP95Ms} ms`);
}

/**
 * PUSH_CLIENTS clients push MUTATIONS_PER_PUSH todos at a time to weir, which forwards them to
 * the app, waits for them to come back through replication, and acknowledges; each push is timed
 * until a pull shows its last mutation acknowledged. The CPU time the weir server's process (and
 * the app server's) spent meanwhile, per acknowledged mutation, is weir's share apart from
 * PostgreSQL's and the clients'.
 */
async function delegatedPush(weir, app, results, log) {
  const url = weir.url;
  const clients = Array.from({ length: PUSH_CLIENTS }, (_, i) => new WeirClient(url, "app", `user${i}`));
  await clients[0].sync();
  await Promise.all(clients.map((client) => client.sync()));
  const latencies = [];
  let acknowledged = 0;
  const [weirCpuBefore, appCpuBefore] = await Promise.all([weir.cpuMs(), app.cpuMs()]);
  const started = performance.now();
  const deadline = started + PUSH_SECONDS * 1000;
  await Promise.all(
    clients.map(async (client) => {
      let n = 0;
      while (performance.now() < deadline) {
        const pushed = performance.now();
        const mutations = Array.from({ length: MUTATIONS_PER_PUSH }, () => ({
          name: "createTodo",
          args: { id: `${client.clientID}-${++n}`, title: `todo ${n}` },
        }));
        const answer = await client.push(mutations);
        if (answer.pushResponse?.mutations?.some((m) => "error" in m.result))
          throw new Error(`push refused: ${JSON.stringify(answer)}`);
        const last = client.nextID - 1;
        while (client.lastMutationID < last) await client.pull();
        latencies.push(performance.now() - pushed);
        acknowledged += MUTATIONS_PER_PUSH;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const [weirCpuAfter, appCpuAfter] = await Promise.all([weir.cpuMs(), app.cpuMs()]);
  // Every acknowledged todo reached its client's pulls.
  await Promise.all(clients.map((client) => client.sync()));
  const rows = clients.reduce((sum, client) => sum + client.count("todo"), 0);
  if (rows !== acknowledged) throw new Error(`clients saw ${rows} todos of ${acknowledged} acknowledged`);
  latencies.sort((a, b) => a - b);
  results.delegatedPushMutationsPerSec = Math.round(acknowledged / seconds);
  results.pushToAckP50Ms = round(percentile(latencies, 50));
  results.pushToAckP95Ms = round(percentile(latencies, 95));
  results.weirCpuMsPerMutation = Number(((weirCpuAfter - weirCpuBefore) / acknowledged).toFixed(3));
  results.appCpuMsPerMutation = Number(((appCpuAfter - appCpuBefore) / acknowledged).toFixed(3));
  results.delegatedPushClients = PUSH_CLIENTS;
  results.delegatedPushMutationsPerPush = MUTATIONS_PER_PUSH;
  log(
    `delegated push: ${results.delegatedPushMutationsPerSec} mutations/s, push to ack p50 ${results.pushToAckP50Ms} ms, p95 ${results.pushToAckP95Ms} ms, CPU per mutation: weir ${results.weirCpuMsPerMutation} ms, app ${results.appCpuMsPerMutation} ms`,
  );
}

/** The same load sent straight to the app's mutate endpoint: its own rate, without weir. */
async function appServerAlone(appUrl, results, log) {
  let acknowledged = 0;
  const started = performance.now();
  const deadline = started + PUSH_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: PUSH_CLIENTS }, async (_, c) => {
      const clientID = `direct-${c}`;
      let id = 0;
      while (performance.now() < deadline) {
        const mutations = Array.from({ length: MUTATIONS_PER_PUSH }, () => {
          id++;
          return {
            type: "custom",
            id,
            clientID,
            name: "createTodo",
            args: [{ id: `${clientID}-${id}`, title: "t" }],
          };
        });
        const answer = await post(
          appUrl,
          { clientGroupID: `direct-group-${c}`, pushVersion: 1, mutations },
          { "x-weir-namespace": "direct", authorization: `user${c}` },
        );
        if (answer.mutations?.length !== MUTATIONS_PER_PUSH) throw new Error(JSON.stringify(answer));
        acknowledged += MUTATIONS_PER_PUSH;
      }
    }),
  );
  results.appServerMutationsPerSec = Math.round(acknowledged / ((performance.now() - started) / 1000));
  log(`app server alone: ${results.appServerMutationsPerSec} mutations/s`);
}
