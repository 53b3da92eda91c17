// `pnpm bench postgres-todo` (after a build): the example's two loops, timed on a private
// PostgreSQL cluster (fsync off, as the tests run it) with the server as `npm start` runs it.
// - insertToWake: an outside writer's INSERT returns, until the wake socket of an open client
//   says `wake` (replication, the buffer's commit, the in-process notify, ingest, the wake).
// - pushAck: a push of one createTodo sent to weir, until weir answers it (weir forwards it to
//   the app server, which writes PostgreSQL; replication brings the row back; weir ingests it
//   and records the mutation).
// The last line is one JSON object with the medians and 95th percentiles in milliseconds.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import WebSocket from "ws";

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const entry = fileURLToPath(new URL("../dist/server.js", import.meta.url));

const server = spawn(process.execPath, [entry, "--private-postgres"], {
  env: { ...process.env, PORT: "0", APP_PORT: "0" },
  stdio: ["ignore", "pipe", "inherit"],
});
const { url, databaseUrl } = await new Promise((resolve, reject) => {
  let output = "";
  server.stdout.on("data", (chunk) => {
    output += chunk.toString();
    const weir = /weir listening on (\S+)/.exec(output);
    const db = /PostgreSQL: (\S+)/.exec(output);
    if (weir && db) resolve({ url: weir[1].replace(/\/$/, ""), databaseUrl: db[1] });
  });
  server.on("exit", (code) => reject(new Error(`the server exited with ${code}:\n${output}`)));
});
const base = `${url}/todo`;
const user = "bench";
const group = `bench-group-${Date.now()}`;

async function post(path, body) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

// Open the namespace and its first snapshot, then a socket to be woken.
await post("/replicache/pull", {
  pullVersion: 1,
  clientGroupID: group,
  cookie: null,
  profileID: "b",
  schemaVersion: "",
});
const socket = new WebSocket(`${base.replace(/^http/, "ws")}/wake?clientID=watcher&auth=${user}`);
await new Promise((resolve, reject) => {
  socket.once("open", resolve);
  socket.once("error", reject);
});
let onWake = () => {};
socket.on("message", (data) => {
  if (data.toString() === "wake") onWake();
});

const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const insertToWake = [];
for (let i = 0; i < ROUNDS + 10; i++) {
  const woken = new Promise((resolve) => {
    onWake = resolve;
  });
  const started = performance.now();
  await db.query("INSERT INTO todo (id, owner, text, done, sort) VALUES ($1, $2, 'outside', false, $3)", [
    `outside-${i}`,
    user,
    i,
  ]);
  await woken;
  if (i >= 10) insertToWake.push(performance.now() - started);
  // Past weir's wake window (at most one wake per socket per 20 ms).
  await sleep(30);
}

const pushAck = [];
for (let i = 1; i <= ROUNDS + 10; i++) {
  const started = performance.now();
  await post("/replicache/push", {
    pushVersion: 1,
    clientGroupID: group,
    profileID: "b",
    schemaVersion: "",
    mutations: [
      {
        clientID: "bench-client",
        id: i,
        name: "createTodo",
        args: { id: `pushed-${i}`, text: "pushed", done: false, sort: i },
        timestamp: i,
      },
    ],
  });
  if (i > 10) pushAck.push(performance.now() - started);
}
const written = await db.query("SELECT count(*)::int AS n FROM todo WHERE id LIKE 'pushed-%'");
if (written.rows[0].n !== ROUNDS + 10) throw new Error(`the table holds ${written.rows[0].n} pushed rows`);

await db.end();
socket.close();
await new Promise((resolve) => {
  server.once("exit", resolve);
  server.kill("SIGTERM");
});

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2));
};
console.log(
  JSON.stringify({
    rounds: ROUNDS,
    insertToWakeP50Ms: quantile(insertToWake, 0.5),
    insertToWakeP95Ms: quantile(insertToWake, 0.95),
    pushAckP50Ms: quantile(pushAck, 0.5),
    pushAckP95Ms: quantile(pushAck, 0.95),
  }),
);
