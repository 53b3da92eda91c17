#!/usr/bin/env node
// What a team writes instead of adopting a sync server: Replicache's "global version" backend
// strategy, by the book, on better-sqlite3 over node:http. It speaks Replicache's pull and push
// (v1) under /<namespace>/replicache/, keeps one global version, a version and a deleted flag
// per row, and each client's last mutation id. It has the bench's two tables: `item`, and the
// todo example's `todo` with its three mutators, their argument checks and the owner rule. A push runs in one transaction with a savepoint
// per mutation, as weir's hosts do, so that the two differ in the work done per mutation and
// not in how often they commit. It is the yardstick of `pnpm bench node`, not part of weir.
//
//   node bench/baseline/server.mjs --db <file> [--port 0]
//   prints {"url":"http://127.0.0.1:<port>"} on stdout once listening.
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";

const { values } = parseArgs({ options: { db: { type: "string" }, port: { type: "string", default: "0" } } });
if (!values.db) {
  console.error("usage: server.mjs --db <file> [--port <port>]");
  process.exit(2);
}

const db = new Database(values.db);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 5000");
db.exec(`
  CREATE TABLE IF NOT EXISTS replicache_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT OR IGNORE INTO replicache_meta VALUES ('version', 0);
  CREATE TABLE IF NOT EXISTS replicache_client_group (id TEXT PRIMARY KEY, user_id TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS replicache_client (
    id TEXT PRIMARY KEY, client_group_id TEXT NOT NULL,
    last_mutation_id INTEGER NOT NULL, version INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS replicache_client_by_group ON replicache_client (client_group_id, version);
  CREATE TABLE IF NOT EXISTS item (
    id TEXT PRIMARY KEY, value REAL NOT NULL, version INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS item_by_version ON item (version);
  CREATE TABLE IF NOT EXISTS todo (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL, done INTEGER NOT NULL,
    sort REAL NOT NULL, version INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS todo_by_owner ON todo (owner, version);
`);

const sql = {
  version: db.prepare("SELECT value FROM replicache_meta WHERE key = 'version'").pluck(),
  setVersion: db.prepare("UPDATE replicache_meta SET value = ? WHERE key = 'version'"),
  groupOwner: db.prepare("SELECT user_id FROM replicache_client_group WHERE id = ?").pluck(),
  addGroup: db.prepare("INSERT INTO replicache_client_group (id, user_id) VALUES (?, ?)"),
  lastMutationID: db.prepare("SELECT last_mutation_id FROM replicache_client WHERE id = ?").pluck(),
  setClient: db.prepare(
    `INSERT INTO replicache_client (id, client_group_id, last_mutation_id, version) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version`,
  ),
  putItem: db.prepare(
    `INSERT INTO item (id, value, version, deleted) VALUES (?, ?, ?, 0)
     ON CONFLICT (id) DO UPDATE SET value = excluded.value, version = excluded.version, deleted = 0`,
  ),
  changedItems: db.prepare("SELECT id, value, deleted FROM item WHERE version > ?"),
  todo: db.prepare("SELECT owner, deleted FROM todo WHERE id = ?"),
  insertTodo: db.prepare(
    `INSERT INTO todo (id, owner, text, done, sort, version) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, text = excluded.text, done = excluded.done,
       sort = excluded.sort, version = excluded.version, deleted = 0`,
  ),
  updateTodo: db.prepare(
    "UPDATE todo SET text = coalesce(?, text), done = coalesce(?, done), version = ? WHERE id = ?",
  ),
  deleteTodo: db.prepare("UPDATE todo SET deleted = 1, version = ? WHERE id = ?"),
  changedTodos: db.prepare(
    "SELECT id, owner, text, done, sort, deleted FROM todo WHERE owner = ? AND version > ?",
  ),
  changedClients: db.prepare(
    "SELECT id, last_mutation_id FROM replicache_client WHERE client_group_id = ? AND version > ?",
  ),
};

class HttpError extends Error {
  constructor(status, body) {
    super(typeof body === "string" ? body : JSON.stringify(body));
    this.status = status;
    this.body = body;
  }
}

class MutatorRefusal extends Error {}

// The todo example's argument checks, as a careful hand-written server has them: a plain object
// with exactly the known fields, ids of 1 to 64 characters, a trimmed text of 1 to 500, a
// boolean done, a finite sort.
function checkFields(args, required, optional = []) {
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new MutatorRefusal("args");
  for (const key of Object.keys(args)) {
    if (!required.includes(key) && !optional.includes(key)) throw new MutatorRefusal(`unknown field ${key}`);
  }
  for (const key of required) if (!(key in args)) throw new MutatorRefusal(`missing ${key}`);
}
function checkID(id) {
  if (typeof id !== "string" || id.length < 1 || id.length > 64) throw new MutatorRefusal("id");
  return id;
}
function checkText(text) {
  if (typeof text !== "string") throw new MutatorRefusal("text");
  const trimmed = text.trim();
  if (trimmed.length < 1 || trimmed.length > 500) throw new MutatorRefusal("text");
  return trimmed;
}
function checkDone(done) {
  if (typeof done !== "boolean") throw new MutatorRefusal("done");
  return done ? 1 : 0;
}
/** A todo the caller may change: it exists, is not deleted, and is theirs. */
function ownTodo(id, userID) {
  const todo = sql.todo.get(id);
  return todo !== undefined && todo.deleted === 0 && todo.owner === userID;
}

const mutators = {
  createTodo(args, version, userID) {
    checkFields(args, ["id", "text", "done", "sort"]);
    const id = checkID(args.id);
    const text = checkText(args.text);
    const done = checkDone(args.done);
    if (typeof args.sort !== "number" || !Number.isFinite(args.sort)) throw new MutatorRefusal("sort");
    const existing = sql.todo.get(id);
    if (existing !== undefined && existing.deleted === 0)
      throw new MutatorRefusal(`todo ${id} already exists`);
    // The owner comes from the caller, never from the arguments.
    sql.insertTodo.run(id, userID, text, done, args.sort, version);
  },
  updateTodo(args, version, userID) {
    checkFields(args, ["id"], ["text", "done"]);
    const id = checkID(args.id);
    const text = args.text === undefined ? null : checkText(args.text);
    const done = args.done === undefined ? null : checkDone(args.done);
    if (!ownTodo(id, userID)) throw new MutatorRefusal(`no todo ${id}`);
    sql.updateTodo.run(text, done, version, id);
  },
  deleteTodo(args, version, userID) {
    checkFields(args, ["id"]);
    const id = checkID(args.id);
    if (ownTodo(id, userID)) sql.deleteTodo.run(version, id);
  },
  benchPut(args, version) {
    sql.putItem.run(String(args.id), Number(args.value), version);
  },
  benchSeed(args, version) {
    for (let i = 0; i < args.count; i++)
      sql.putItem.run(`${args.prefix}-${args.start + i}`, args.start + i, version);
  },
};

function claimGroup(clientGroupID, userID) {
  const owner = sql.groupOwner.get(clientGroupID);
  if (owner === undefined) sql.addGroup.run(clientGroupID, userID);
  else if (owner !== userID)
    throw new HttpError(403, { error: "forbidden", message: "another user's client group" });
}

// Nested in the push's transaction, a better-sqlite3 transaction is a savepoint: a failing
// mutator rolls back alone.
const runMutator = db.transaction((mutator, args, version, userID) => mutator(args, version, userID));

const processMutation = db.transaction((clientGroupID, mutation, userID) => {
  const version = sql.version.get() + 1;
  const last = sql.lastMutationID.get(mutation.clientID) ?? 0;
  if (mutation.id <= last) return; // already processed
  if (mutation.id > last + 1) throw new HttpError(200, {}); // out of order: ignored, the client retries
  const mutator = mutators[mutation.name];
  try {
    if (mutator) runMutator(mutator, mutation.args, version, userID);
  } catch {
    // A failing mutator still advances the id so that the client does not retry forever.
  }
  sql.setClient.run(mutation.clientID, clientGroupID, mutation.id, version);
  sql.setVersion.run(version);
});

const pushTx = db.transaction((body, userID) => {
  claimGroup(body.clientGroupID, userID);
  for (const mutation of body.mutations) {
    try {
      processMutation(body.clientGroupID, mutation, userID);
    } catch (error) {
      if (error instanceof HttpError && error.status === 200) break;
      throw error;
    }
  }
});

function push(body, userID) {
  if (body.pushVersion !== 1) throw new HttpError(400, { error: "VersionNotSupported", versionType: "push" });
  pushTx(body, userID);
  return {};
}

const pullTx = db.transaction((body, userID) => {
  claimGroup(body.clientGroupID, userID);
  const current = sql.version.get();
  const from = body.cookie ?? 0;
  if (typeof from !== "number" || from > current) throw new HttpError(409, { error: "bad_cookie" });
  const patch = body.cookie === null ? [{ op: "clear" }] : [];
  for (const row of sql.changedItems.iterate(from)) {
    if (row.deleted) patch.push({ op: "del", key: `item/${row.id}` });
    else patch.push({ op: "put", key: `item/${row.id}`, value: { id: row.id, value: row.value } });
  }
  for (const row of sql.changedTodos.iterate(userID, from)) {
    if (row.deleted) patch.push({ op: "del", key: `todo/${row.id}` });
    else {
      const value = { id: row.id, owner: row.owner, text: row.text, done: row.done === 1, sort: row.sort };
      patch.push({ op: "put", key: `todo/${row.id}`, value });
    }
  }
  const lastMutationIDChanges = {};
  for (const client of sql.changedClients.iterate(body.clientGroupID, from)) {
    lastMutationIDChanges[client.id] = client.last_mutation_id;
  }
  return { cookie: current, lastMutationIDChanges, patch };
});

function pull(body, userID) {
  if (body.pullVersion !== 1) throw new HttpError(400, { error: "VersionNotSupported", versionType: "pull" });
  return pullTx(body, userID);
}

const routes = { push, pull };

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let status = 200;
    let answer;
    try {
      const match = /^\/[A-Za-z0-9_-]+\/replicache\/(push|pull)$/.exec(req.url ?? "");
      if (!match || req.method !== "POST") throw new HttpError(404, { error: "not_found" });
      const userID = req.headers.authorization;
      if (!userID) throw new HttpError(401, { error: "unauthorized" });
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        throw new HttpError(400, { error: "parse" });
      }
      answer = routes[match[1]](body, userID);
    } catch (error) {
      status = error instanceof HttpError ? error.status : 500;
      answer = error instanceof HttpError ? error.body : { error: "internal", message: String(error) };
    }
    const text = JSON.stringify(answer);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60_000;

function stop() {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

server.listen(Number(values.port), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
