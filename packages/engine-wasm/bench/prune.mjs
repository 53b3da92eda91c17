// `pnpm bench prune`: retention of a change log read through visibility keys, on better-sqlite3
// (file database, WAL). 1,000 rows of 100 owners, each updated in every version of 1,000 changes,
// the owner column keyed by a pull (one key a change), then the oldest 10,000 changes pruned:
// `pruneMs` is the median of three namespaces, `noteMs` that of the pull that noted the keys (it
// also answers the caller's rows). WEIR_BENCH_KEYS sets the keys (100,000).
// Prints one line per namespace, then one JSON object as the last line.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { betterSqliteAdapter } from "../dist/better-sqlite3-adapter.js";
import { Engine, engineWasmUrl } from "../dist/index.js";

const schema = {
  tables: {
    item: {
      columns: { id: "string", title: "string", score: "number", rank: "integer" },
      primaryKey: ["id"],
    },
  },
};
const ROWS = 1_000;
const versions = Math.round(Number(process.env.WEIR_BENCH_KEYS ?? 100_000) / ROWS);
const pruned = 10;
const dir = mkdtempSync(join(tmpdir(), "weir-bench-prune-"));
const engine = await Engine.load(readFileSync(engineWasmUrl));
const samples = [];
const notes = [];
let keys = 0;

for (let run = 0; run < 3; run++) {
  const db = new Database(join(dir, `ns${run}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const adapter = betterSqliteAdapter(db);
  const tx = db.transaction((fn) => fn());
  let mutationID = 0;
  const commit = () =>
    engine.finalize(adapter, { clientGroupID: "w", clientID: "w", mutationID: ++mutationID });
  tx(() => engine.install(adapter, schema));
  const insert = db.prepare("INSERT INTO item (id, title, score, rank) VALUES (?, 't', ?, ?)");
  tx(() => {
    for (let i = 0; i < ROWS; i++) insert.run(`item-${i}`, i, i % 100);
    commit();
  });
  tx(() => engine.prune(adapter, 0));
  // The owner column is keyed by a pull, and the keys of the versions after it noted by the next.
  const owner = {
    clientGroupID: "g",
    userID: "u",
    cookie: null,
    visibility: { item: { sql: "rank = ?", params: [0] } },
  };
  tx(() => engine.pull(adapter, owner));
  const update = db.prepare("UPDATE item SET title = title || '!' WHERE id = ?");
  for (let v = 0; v < versions; v++) {
    tx(() => {
      for (let i = 0; i < ROWS; i++) update.run(`item-${i}`);
      commit();
    });
  }
  const noted = process.hrtime.bigint();
  tx(() => engine.pull(adapter, owner));
  notes.push(Number(process.hrtime.bigint() - noted) / 1e6);
  keys = db.prepare("SELECT count(*) FROM _weir_change_keys").pluck().get();
  const start = process.hrtime.bigint();
  const result = tx(() => engine.prune(adapter, versions - pruned, 1_000_000));
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  samples.push(ms);
  console.log(`prune ${result.deleted} changes among ${keys} keys: ${ms.toFixed(1)} ms`);
  db.close();
}
rmSync(dir, { recursive: true, force: true });
const median = (values) => +[...values].sort((a, b) => a - b)[1].toFixed(1);
const figures = { keys, prunedChanges: pruned * ROWS, pruneMs: median(samples), noteMs: median(notes) };
console.log(JSON.stringify({ suite: "prune", ...figures }));
