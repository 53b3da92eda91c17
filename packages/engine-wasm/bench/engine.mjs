// `pnpm bench engine`: the engine on better-sqlite3 (file database, WAL), in one process.
// Prints one line per figure as it is measured, then one JSON object as the last line.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { betterSqliteAdapter } from "../dist/better-sqlite3-adapter.js";
import { Engine, engineWasmUrl, leanEngineWasmUrl } from "../dist/index.js";

const schema = {
  tables: {
    item: {
      columns: { id: "string", title: "string", score: "number", rank: "integer" },
      primaryKey: ["id"],
    },
  },
};
const dir = mkdtempSync(join(tmpdir(), "weir-bench-engine-"));
const engine = await Engine.load(readFileSync(engineWasmUrl));
let opened = 0;

function open(rows) {
  const db = new Database(join(dir, `ns${opened++}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const adapter = betterSqliteAdapter(db);
  // One transaction wrapper per database, as the hosts keep it.
  const run = db.transaction((fn) => fn());
  const tx = (fn) => run(fn);
  tx(() => engine.install(adapter, schema));
  const insert = db.prepare("INSERT INTO item (id, title, score, rank) VALUES (?, ?, ?, ?)");
  const batch = 50_000;
  for (let start = 0; start < rows; start += batch) {
    tx(() => {
      for (let i = start; i < Math.min(rows, start + batch); i++)
        insert.run(`item-${i}`, `Item number ${i}`, i * 1.25 + 0.1, i);
      engine.finalize(adapter, {
        clientGroupID: "loader",
        clientID: "loader",
        mutationID: start / batch + 1,
      });
    });
  }
  tx(() => engine.prune(adapter, 0));
  return { db, adapter, tx };
}

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn, runs) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

let clientMutation = 0;
function changeRows(ns, count, total) {
  ns.tx(() => {
    const update = ns.db.prepare("UPDATE item SET title = title || '!' WHERE id = ?");
    for (let i = 0; i < count; i++) update.run(`item-${Math.floor((i * total) / count)}`);
    engine.finalize(ns.adapter, {
      clientGroupID: "writer",
      clientID: "writer",
      mutationID: ++clientMutation,
    });
  });
}

const pull = (ns, cookie) =>
  ns.tx(() => engine.pull(ns.adapter, { clientGroupID: "bench", userID: "bench", cookie }));
const report = {};
const log = (name, value, unit) => {
  report[name] = value;
  console.log(`${name.padEnd(22)} ${String(value).padStart(12)} ${unit}`);
};

// Full reset pull of 100,000 rows.
const big = open(100_000);
const fullMs = time(() => {
  const result = pull(big, null);
  if (result.puts !== 100_000) throw new Error(`expected 100000 rows, got ${result.puts}`);
}, 7);
log("fullPullRowsPerSec", Math.round(100_000 / (fullMs / 1000)), "rows/s");

// 1,000 changed rows of the 100,000, against the same SQL done directly in JS.
const before = big.tx(() => engine.state(big.adapter).watermark);
changeRows(big, 1_000, 100_000);
const direct = big.db.prepare(
  "SELECT t.id, t.title, t.score, t.rank FROM (SELECT DISTINCT pk FROM _weir_changes WHERE version > ?) AS c " +
    "JOIN item AS t ON t.id = json_extract(c.pk, '$[0]')",
);
const directPull = () =>
  big.tx(() => {
    const rows = direct.all(before);
    return JSON.stringify({
      cookie: before + 1,
      lastMutationIDChanges: {},
      rowsPatch: rows.map((value) => ({ op: "put", tableName: "item", value })),
    });
  });
if (JSON.parse(directPull()).rowsPatch.length !== 1_000)
  throw new Error("the direct pull did not see 1000 rows");
const incrementalMs = time(() => pull(big, before), 31);
const directMs = time(directPull, 31);
log("incrementalPullMs", +incrementalMs.toFixed(3), "ms");
log("directPullMs", +directMs.toFixed(3), "ms");
log("incrementalPullRatio", +(incrementalMs / directMs).toFixed(2), "x");

// 10 changed rows from 10,000 and from 1,000,000 rows.
function tenChanges(rows) {
  const ns = open(rows);
  const cookie = ns.tx(() => engine.state(ns.adapter).watermark);
  changeRows(ns, 10, rows);
  const ms = time(() => pull(ns, cookie), 101);
  ns.db.close();
  return ms;
}
const smallMs = tenChanges(10_000);
const hugeMs = tenChanges(1_000_000);
log("pull10of10kMs", +smallMs.toFixed(4), "ms");
log("pull10of1MMs", +hugeMs.toFixed(4), "ms");
log("scaleRatio", +(hugeMs / smallMs).toFixed(2), "x");

// Caught-up pulls: time and writes.
const caught = pull(big, null).cookie;
const totalChanges = big.db.prepare("SELECT total_changes()").pluck();
const writesBefore = totalChanges.get();
const idleMs = time(() => pull(big, caught), 2_001);
log("idlePullMicros", +(idleMs * 1000).toFixed(1), "µs");
log("idlePullWrites", totalChanges.get() - writesBefore, "rows");
big.db.close();

// Pushes: preflight, a one-row insert mutator and finalize, one transaction each.
const pushNs = open(0);
const insertOne = pushNs.db.prepare("INSERT INTO item (id, title, score, rank) VALUES (?, ?, ?, ?)");
const push = pushNs.db.transaction((id) => {
  const ref = { clientGroupID: "g", clientID: "c", mutationID: id };
  if (engine.preflight(pushNs.adapter, ref).status !== "apply") throw new Error("unexpected preflight");
  insertOne.run(`new-${id}`, "pushed", id / 7, id);
  engine.finalize(pushNs.adapter, ref);
});
const pushes = 20_000;
const pushStart = process.hrtime.bigint();
const pushCpu = process.cpuUsage();
for (let id = 1; id <= pushes; id++) push(id);
const pushSeconds = Number(process.hrtime.bigint() - pushStart) / 1e9;
const { user, system } = process.cpuUsage(pushCpu);
log("pushPerSec", Math.round(pushes / pushSeconds), "mutations/s");
// The process's CPU time per push: a busy machine stretches the wall time far more.
log("pushCpuMicros", +((user + system) / pushes).toFixed(1), "µs");

// The work of a push, which the machine's load does not change: the engine's statements and the
// WAL pages a push's commit writes (1,000 more pushes into an emptied WAL, checkpoints off).
let statements = 0;
const counted = {
  query: (sql, params) => {
    statements++;
    return pushNs.adapter.query(sql, params);
  },
  exec: (sql, params) => {
    statements++;
    return pushNs.adapter.exec(sql, params);
  },
};
const countedPush = pushNs.db.transaction((id) => {
  const ref = { clientGroupID: "g", clientID: "c", mutationID: id };
  engine.preflight(counted, ref);
  insertOne.run(`new-${id}`, "pushed", id / 7, id);
  engine.finalize(counted, ref);
});
countedPush(pushes + 1);
pushNs.db.pragma("wal_autocheckpoint = 0");
pushNs.db.pragma("wal_checkpoint(TRUNCATE)");
statements = 0;
const counting = 1_000;
for (let id = pushes + 2; id < pushes + 2 + counting; id++) countedPush(id);
const pageSize = pushNs.db.pragma("page_size", { simple: true });
// A WAL file: a 32-byte header, then frames of a 24-byte header and a page each.
const frames = (statSync(join(dir, `ns${opened - 1}.db-wal`)).size - 32) / (pageSize + 24);
log("pushStatements", +(statements / counting).toFixed(2), "engine statements/push");
log("pushWalPages", +(frames / counting).toFixed(2), "pages/push");
pushNs.db.close();

log("wasmBytes", statSync(fileURLToPath(engineWasmUrl)).size, "bytes");
// The lean build (no query engine), which hosts load for a config without named queries.
log("leanWasmBytes", statSync(fileURLToPath(leanEngineWasmUrl)).size, "bytes");
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(report));
