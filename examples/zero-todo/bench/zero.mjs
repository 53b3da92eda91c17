#!/usr/bin/env node
// `pnpm bench zero`: the stock Zero client (1.9, in this process, `ws` as its WebSocket) against
// weir's Node host in a process of its own (bench/zero-server.mjs), over loopback. Measures:
//   connectToCompleteMs    a new client to its first query complete, 1,000 rows (median)
//   mutationToConfirmP95Ms a custom mutation to its `.server` success (p95, one at a time)
//   fanoutP95Ms            a write to its rows in the views of 200 other connected clients (p95)
//   fanoutClientCpuPerPokeMicros  the CPU the client process spends per client and write in it
//   fanoutPokeP95Ms        the same write to the end of its poke on 200 sockets of Zero's protocol
//                          spoken by hand (the server's part of fan-out, without the clients')
// Prints a table, then, as the last line, one JSON object with the figures.
//
//   pnpm bench zero [--quick]   --quick: fewer rounds and clients, for a smoke run
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  boolean,
  createBuilder,
  createSchema,
  defineMutator,
  defineMutators,
  defineQueries,
  defineQuery,
  number,
  string,
  table,
  Zero,
} from "@rocicorp/zero";
import { WebSocket } from "ws";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const ROWS = 1_000;
const CONNECT_ROUNDS = quick ? 3 : 10;
const CONFIRMS = quick ? 50 : 200;
const FANOUT_CLIENTS = quick ? 20 : 200;
const FANOUT_WRITES = quick ? 5 : 20;

globalThis.WebSocket = WebSocket;
globalThis.navigator ??= { onLine: true, userAgent: "node" };

const schema = createSchema({
  tables: [
    table("todo")
      .columns({ id: string(), owner: string(), text: string(), done: boolean(), sort: number() })
      .primaryKey("id"),
  ],
});
const zql = createBuilder(schema);
const queries = defineQueries({ allTodos: defineQuery(() => zql.todo.orderBy("sort", "asc")) });
const mutators = defineMutators({
  createTodo: defineMutator(async ({ tx, args, ctx }) => {
    await tx.mutate.todo.insert({ ...args, owner: ctx.userID });
  }),
});

let keys = 0;
function client(base, user) {
  return new Zero({
    cacheURL: base,
    userID: user,
    auth: user,
    schema,
    mutators,
    context: { userID: user },
    kvStore: "mem",
    storageKey: `b${++keys}`,
    logLevel: "error",
  });
}

/** Resolves with the view once `check` holds of its rows and the query is complete. */
function whenComplete(z, check) {
  const view = z.materialize(queries.allTodos());
  return new Promise((resolve) => {
    view.addListener((rows, resultType) => {
      if (resultType === "complete" && check(rows)) resolve(view);
    });
  });
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (ms) => Math.round(ms * 100) / 100;

async function startServer() {
  const child = spawn(process.execPath, [join(here, "zero-server.mjs")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const line = text.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line).url);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
  });
  return { child, base: `${url}/bench` };
}

/** Zero's Sec-WebSocket-Protocol: URI-encoded base64 of the JSON of initConnection and the token. */
function secProtocol(init, authToken) {
  return encodeURIComponent(
    Buffer.from(JSON.stringify({ initConnectionMessage: init, authToken })).toString("base64"),
  );
}

/** Fan-out measured at the socket: each write's time to the end of its poke on every socket. */
async function socketFanout(base) {
  const wsBase = `${base.replace("http", "ws")}/sync/v51/connect`;
  const init = [
    "initConnection",
    { desiredQueriesPatch: [{ op: "put", hash: "h", name: "allTodos", args: [] }] },
  ];
  const sockets = [];
  for (let i = 0; i < FANOUT_CLIENTS; i++) {
    const ws = new WebSocket(
      `${wsBase}?clientID=s${i}&clientGroupID=sg${i}&baseCookie=&lmid=0&wsid=s${i}`,
      secProtocol(init, "socket"),
    );
    const socket = { ws, ends: 0, last: 0 };
    ws.on("message", (data) => {
      if (String(data).startsWith('["pokeEnd"')) {
        socket.ends++;
        socket.last = performance.now();
      }
    });
    sockets.push(socket);
  }
  const until = (done) =>
    new Promise((resolve) => {
      const timer = setInterval(() => {
        if (done()) {
          clearInterval(timer);
          resolve();
        }
      }, 1);
    });
  await until(() => sockets.every((s) => s.ends >= 1));
  const writer = client(base, "socket");
  await whenComplete(writer, () => true);
  const latencies = [];
  for (let n = 0; n < FANOUT_WRITES; n++) {
    const before = sockets.map((s) => s.ends);
    const started = performance.now();
    await writer.mutate(mutators.createTodo({ id: `s${n}`, text: "socket", done: false, sort: n })).server;
    await until(() => sockets.every((s, i) => s.ends > before[i]));
    for (const s of sockets) latencies.push(s.last - started);
  }
  await writer.close();
  for (const s of sockets) s.ws.close();
  return latencies;
}

async function main() {
  const { child, base } = await startServer();
  try {
    // 1,000 rows of one user, written by a client of theirs.
    const seeder = client(base, "reader");
    const batch = [];
    for (let n = 0; n < ROWS; n++) {
      batch.push(
        seeder.mutate(mutators.createTodo({ id: `r${n}`, text: `row ${n}`, done: false, sort: n })).server,
      );
    }
    await Promise.all(batch);
    await seeder.close();

    const connects = [];
    for (let r = 0; r < CONNECT_ROUNDS; r++) {
      const started = performance.now();
      const z = client(base, "reader");
      const view = await whenComplete(z, (rows) => rows.length === ROWS);
      connects.push(performance.now() - started);
      view.destroy();
      await z.close();
    }

    const writer = client(base, "writer");
    const view = await whenComplete(writer, () => true);
    const confirms = [];
    for (let n = 0; n < CONFIRMS; n++) {
      const started = performance.now();
      const result = await writer.mutate(
        mutators.createTodo({ id: `w${n}`, text: "x", done: false, sort: n }),
      ).server;
      if (result.type !== "success") throw new Error(`a mutation failed: ${JSON.stringify(result)}`);
      confirms.push(performance.now() - started);
    }
    view.destroy();
    await writer.close();

    const watchers = [];
    for (let n = 0; n < FANOUT_CLIENTS; n++) watchers.push(client(base, "fan"));
    const seen = watchers.map(() => new Map());
    await Promise.all(
      watchers.map((z, index) => {
        const v = z.materialize(queries.allTodos());
        return new Promise((resolve) => {
          v.addListener((rows, resultType) => {
            const now = performance.now();
            for (const row of rows) if (!seen[index].has(row.id)) seen[index].set(row.id, now);
            if (resultType === "complete") resolve();
          });
        });
      }),
    );
    const fanWriter = client(base, "fan");
    await whenComplete(fanWriter, () => true);
    const fanout = [];
    // The clients' own work: all 200 run in this process, so what it spends is theirs.
    const cpuBefore = process.cpuUsage();
    for (let n = 0; n < FANOUT_WRITES; n++) {
      const id = `f${n}`;
      const started = performance.now();
      await fanWriter.mutate(mutators.createTodo({ id, text: "fan", done: false, sort: n })).server;
      for (;;) {
        if (seen.every((m) => m.has(id))) break;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      for (const m of seen) fanout.push(m.get(id) - started);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const clientCpuPerPoke = (cpu.user + cpu.system) / (FANOUT_WRITES * FANOUT_CLIENTS);
    await fanWriter.close();
    await Promise.all(watchers.map((z) => z.close()));

    const pokes = await socketFanout(base);

    const result = {
      connectToCompleteMs: round(quantile(connects, 0.5)),
      mutationToConfirmP95Ms: round(quantile(confirms, 0.95)),
      mutationToConfirmMedianMs: round(quantile(confirms, 0.5)),
      fanoutP95Ms: round(quantile(fanout, 0.95)),
      fanoutMedianMs: round(quantile(fanout, 0.5)),
      fanoutClientCpuPerPokeMicros: Math.round(clientCpuPerPoke),
      fanoutPokeP95Ms: round(quantile(pokes, 0.95)),
      fanoutPokeMedianMs: round(quantile(pokes, 0.5)),
      rows: ROWS,
      fanoutClients: FANOUT_CLIENTS,
    };
    process.stderr.write(
      `connect to complete (${ROWS} rows, median of ${CONNECT_ROUNDS}): ${result.connectToCompleteMs} ms\n` +
        `mutation to confirm (${CONFIRMS}): p50 ${result.mutationToConfirmMedianMs} ms, p95 ${result.mutationToConfirmP95Ms} ms\n` +
        `fan-out to ${FANOUT_CLIENTS} clients (${FANOUT_WRITES} writes): p50 ${result.fanoutMedianMs} ms, p95 ${result.fanoutP95Ms} ms\n` +
        `  the clients' own CPU per client and write: ${result.fanoutClientCpuPerPokeMicros} µs\n` +
        `fan-out to ${FANOUT_CLIENTS} sockets, to the poke's end: p50 ${result.fanoutPokeMedianMs} ms, p95 ${result.fanoutPokeP95Ms} ms\n`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
process.exit(0);
