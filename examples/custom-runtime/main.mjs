// weir's engine in your own runtime: no weir host, no native module. The runtime supplies
// storage (here sql.js, SQLite compiled to WASM), transactions and the mutators; the engine
// keeps the change log and answers pulls.
import { readFile } from "node:fs/promises";
import { Engine, engineWasmUrl } from "@weir/engine-wasm";
import { sqlJsAdapter } from "@weir/engine-wasm/sql-js";
import initSqlJs from "sql.js";

const schema = {
  tables: {
    note: {
      columns: { id: "string", author: "string", body: "string", pinned: "boolean" },
      primaryKey: ["id"],
    },
  },
};

// The runtime's mutators: synchronous functions over SQL.
const mutators = {
  addNote: (db, { id, body }, userID) =>
    db.exec("INSERT INTO note (id, author, body, pinned) VALUES (?, ?, ?, 0)", [id, userID, body]),
  pinNote: (db, { id }) => db.exec("UPDATE note SET pinned = 1 WHERE id = ?", [id]),
  deleteNote: (db, { id }) => db.exec("DELETE FROM note WHERE id = ?", [id]),
};

const SQL = await initSqlJs();
const database = new SQL.Database();
const db = sqlJsAdapter(database);
const engine = await Engine.load(await readFile(engineWasmUrl));

// The engine never begins or commits: the runtime owns transactions.
function transaction(fn) {
  database.run("BEGIN");
  try {
    const result = fn();
    database.run("COMMIT");
    return result;
  } catch (error) {
    database.run("ROLLBACK");
    throw error;
  }
}

transaction(() => engine.install(db, schema));

/** Applies one pushed mutation the way a host does: preflight, mutator, finalize, one transaction. */
function push(userID, clientGroupID, { clientID, id, name, args }) {
  const ref = { clientGroupID, clientID, mutationID: id };
  return transaction(() => {
    engine.claimGroup(db, clientGroupID, userID);
    const { status } = engine.preflight(db, ref);
    if (status !== "apply") return status;
    mutators[name](db, args, userID);
    engine.finalize(db, ref);
    return "applied";
  });
}

const results = [
  push("ada", "laptop", { clientID: "tab-1", id: 1, name: "addNote", args: { id: "n1", body: "Buy milk" } }),
  push("ada", "laptop", { clientID: "tab-1", id: 2, name: "addNote", args: { id: "n2", body: "Call Bob" } }),
  push("ada", "laptop", { clientID: "tab-1", id: 3, name: "pinNote", args: { id: "n1" } }),
  push("ada", "laptop", { clientID: "tab-1", id: 4, name: "deleteNote", args: { id: "n2" } }),
  push("ada", "laptop", { clientID: "tab-1", id: 4, name: "deleteNote", args: { id: "n2" } }),
];
console.log(`pushes: ${results.join(", ")}`);

const visibility = (userID) => ({ note: { sql: "author = ?", params: [userID] } });
const first = transaction(() =>
  engine.pull(db, { clientGroupID: "laptop", userID: "ada", cookie: null, visibility: visibility("ada") }),
);
console.log(`pull from scratch: ${first.body}`);
const again = transaction(() =>
  engine.pull(db, {
    clientGroupID: "laptop",
    userID: "ada",
    cookie: first.cookie,
    visibility: visibility("ada"),
  }),
);
console.log(`pull when caught up: ${again.body}`);
