import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import type { MutateRequest } from "@weir/protocol";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPushProcessor,
  type PostgresMutator,
  type PostgresUpstream,
  type PushProcessor,
  parseLsn,
  postgresUpstream,
} from "../src/index.js";
import { waitFor } from "./namespace-model.js";

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let pool: pg.Pool;
let processor: PushProcessor;
let server: Server;
let url: string;
const committed: number[] = [];

const mutators: Record<string, PostgresMutator> = {
  async createTodo(tx, args, context) {
    const { id, title } = args as { id: string; title: string };
    await tx.query("INSERT INTO todo (id, owner, title) VALUES ($1, $2, $3)", [
      id,
      context.authorization,
      title,
    ]);
  },
  /** Writes, then refuses: the write must roll back alone. */
  async createThenRefuse(tx, args) {
    await tx.query("INSERT INTO todo (id, owner, title) VALUES ($1, 'x', 'refused')", [
      (args as { id: string }).id,
    ]);
    throw new Error("not today");
  },
};

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-push-processor-"));
  await db.sql(`CREATE TABLE todo (id text PRIMARY KEY, owner text, title text NOT NULL);
    CREATE TABLE unrelated (n int); ALTER TABLE todo REPLICA IDENTITY FULL;`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["todo"],
    bufferFile: join(dir, "buffer.sqlite"),
  });
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  processor = createPushProcessor({
    pool,
    mutators,
    authorize: (authorization) => authorization !== "Bearer mallory",
    onCommitted: (context) => committed.push(context.mutationID),
  });
  server = createServer((req, res) => void processor.handleNode(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mutate`;
});

afterAll(async () => {
  server?.close();
  await pool?.end();
  await upstream?.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let groups = 0;
function push(mutations: Array<{ id: number; name: string; args: unknown }>, clientID = "c1"): MutateRequest {
  return {
    clientGroupID: `g${++groups}`,
    pushVersion: 1,
    mutations: mutations.map((m) => ({ type: "custom", clientID, ...m, args: [m.args] })),
  };
}

async function titles(): Promise<string[]> {
  return (await db.sql("SELECT id FROM todo ORDER BY id")).rows.map((row) => row.id as string);
}

/** Reads the namespace's changes from `after` until the upstream's answer reaches `watermark`. */
async function changesUntil(after: bigint, watermark: bigint, timeoutMs = 20_000) {
  const source = upstream.source("app");
  let page = await source.changes(after, 1000);
  await waitFor(
    async () => {
      page = await source.changes(after, 1000);
      return page.watermark >= watermark;
    },
    timeoutMs,
    `the upstream to reach ${watermark}`,
  );
  return page.changes.map((change) => change.rowData?.id);
}

describe("the PostgreSQL push processor", () => {
  it("runs each mutation in its own transaction: a refusal rolls back alone, and the upstream reaches the answer's watermark with the writes", async () => {
    const before = BigInt((await upstream.status()).buffer.newestWatermark);
    const request = push([
      { id: 1, name: "createTodo", args: { id: "a", title: "one" } },
      { id: 2, name: "createThenRefuse", args: { id: "b" } },
      { id: 3, name: "createTodo", args: { id: "c", title: "three" } },
      { id: 4, name: "noSuchMutator", args: {} },
    ]);
    const answer = await processor.process(request, { namespace: "app", authorization: "alice" });
    expect("mutations" in answer).toBe(true);
    if (!("mutations" in answer)) return;
    expect(answer.mutations.map((m) => [m.id.id, m.result])).toEqual([
      [1, {}],
      [2, { error: "app", message: "not today" }],
      [3, {}],
      [4, { error: "app", message: "no mutator noSuchMutator" }],
    ]);
    expect(await titles()).toEqual(["a", "c"]);
    const last = await db.sql("SELECT last_mutation_id FROM weir_app_clients WHERE client_group_id = $1", [
      request.clientGroupID,
    ]);
    expect(Number(last.rows[0].last_mutation_id)).toBe(4);
    expect(await changesUntil(before, answer.watermark!)).toEqual(["a", "c"]);
  });

  it("leaves a push's commits on the disk when it answers, so replication can decode them at once", async () => {
    const request = push([
      { id: 1, name: "createTodo", args: { id: "w1", title: "x" } },
      { id: 2, name: "createTodo", args: { id: "w2", title: "y" } },
    ]);
    const answer = await processor.process(request, { namespace: "app", authorization: "alice" });
    if (!("mutations" in answer)) throw new Error(JSON.stringify(answer));
    // The WAL writer flushes asynchronous commits only every wal_writer_delay (200 ms): the
    // push's last commit waited for the disk instead, carrying the others with it.
    const flushed = await db.sql("SELECT pg_current_wal_flush_lsn()::text AS lsn");
    expect(parseLsn(flushed.rows[0].lsn)).toBeGreaterThan(answer.watermark!);
  });

  it("commits synchronously when asked, and the upstream reaches that answer's watermark too", async () => {
    const synchronous = createPushProcessor({ pool, mutators, synchronousCommit: true });
    const settled = BigInt((await upstream.status()).buffer.newestWatermark);
    const now = await pool.query("SELECT pg_current_wal_insert_lsn()::text AS lsn");
    const before = parseLsn(now.rows[0].lsn) - 1n;
    await changesUntil(settled, before);
    const answer = await synchronous.process(
      push([{ id: 1, name: "createTodo", args: { id: "s1", title: "durable" } }]),
      { namespace: "app", authorization: "alice" },
    );
    if (!("mutations" in answer)) throw new Error("expected mutations");
    expect(await changesUntil(before, answer.watermark!)).toEqual(["s1"]);
  });

  it("applies nothing twice when the same push comes again, one after the other or at once", async () => {
    const request = push([
      { id: 1, name: "createTodo", args: { id: "d1", title: "x" } },
      { id: 2, name: "createTodo", args: { id: "d2", title: "y" } },
    ]);
    const context = { namespace: "app", authorization: "alice" };
    committed.length = 0;
    const answers = await Promise.all([
      processor.process(request, context),
      processor.process(request, context),
      processor.process(request, context),
    ]);
    const again = await processor.process(request, context);
    for (const answer of [...answers, again]) {
      expect(answer).toMatchObject({ mutations: [{ result: {} }, { result: {} }] });
    }
    expect(committed.sort()).toEqual([1, 2]);
    expect((await titles()).filter((id) => id.startsWith("d"))).toEqual(["d1", "d2"]);
  });

  it("records a client's refused first mutation, so that its next one runs, and a refusal sent again stays a replay", async () => {
    const request = push([{ id: 1, name: "createThenRefuse", args: { id: "f1" } }]);
    const context = { namespace: "app", authorization: "alice" };
    expect(await processor.process(request, context)).toMatchObject({
      mutations: [{ result: { error: "app", message: "not today" } }],
    });
    // Sent again: acknowledged without running (the refusal was recorded).
    expect(await processor.process(request, context)).toMatchObject({ mutations: [{ result: {} }] });
    const next = {
      ...request,
      mutations: push([{ id: 2, name: "createTodo", args: { id: "f2", title: "x" } }]).mutations,
    };
    expect(await processor.process(next, context)).toMatchObject({ mutations: [{ result: {} }] });
    expect((await titles()).filter((id) => id.startsWith("f"))).toEqual(["f2"]);
    const last = await db.sql("SELECT last_mutation_id FROM weir_app_clients WHERE client_group_id = $1", [
      request.clientGroupID,
    ]);
    expect(Number(last.rows[0].last_mutation_id)).toBe(2);
  });

  it("refuses a mutation past the next one with a PushFailed naming the rest", async () => {
    const request = push([
      { id: 2, name: "createTodo", args: { id: "o2", title: "x" } },
      { id: 3, name: "createTodo", args: { id: "o3", title: "y" } },
    ]);
    const answer = await processor.process(request, { namespace: "app", authorization: "alice" });
    expect(answer).toMatchObject({
      pushResponse: {
        kind: "PushFailed",
        reason: "oooMutation",
        mutationIDs: [
          { clientID: "c1", id: 2 },
          { clientID: "c1", id: 3 },
        ],
      },
    });
    expect((await titles()).filter((id) => id.startsWith("o"))).toEqual([]);
  });

  it("answers a watermark the stream passes at once, when the last write was to a table it does not follow", async () => {
    // A refused mutation writes only the clients table, which is not published: nothing of it is
    // buffered, and the stream must still pass its watermark without waiting for other WAL
    // (PostgreSQL writes some every 15 s, so 5 s tells a keepalive from that).
    // Earlier tests' commits (asynchronous) are passed first, so only this test's are after `before`.
    const now = await pool.query("SELECT pg_current_wal_insert_lsn()::text AS lsn");
    const before = parseLsn(now.rows[0].lsn) - 1n;
    await changesUntil(BigInt((await upstream.status()).buffer.newestWatermark), before);
    const answer = await processor.process(push([{ id: 1, name: "createThenRefuse", args: { id: "r9" } }]), {
      namespace: "app",
      authorization: "alice",
    });
    if (!("mutations" in answer)) throw new Error("expected mutations");
    expect(answer.mutations[0]!.result).toMatchObject({ error: "app" });
    expect(await changesUntil(before, answer.watermark!, 5_000)).toEqual([]);
    await pool.query("INSERT INTO unrelated VALUES (1)");
    const position = await pool.query("SELECT pg_current_wal_insert_lsn()::text AS lsn");
    expect(await changesUntil(before, parseLsn(position.rows[0].lsn) - 1n, 5_000)).toEqual([]);
  });

  it("serves the endpoint over node:http and as a Fetch handler, refusing bad requests with a clear 4xx", async () => {
    const request = push([{ id: 1, name: "createTodo", args: { id: "h1", title: "http" } }]);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "x-weir-namespace": "app", ...headers },
      });
    const ok = await post(JSON.stringify(request), { authorization: "alice" });
    expect(ok.status).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: checked field by field
    const json: any = await ok.json();
    expect(json.mutations).toEqual([{ id: { clientID: "c1", id: 1 }, result: {} }]);
    expect(BigInt(json.watermark)).toBeGreaterThan(0n);
    expect((await post("{", {})).status).toBe(400);
    expect((await post(JSON.stringify({ ...request, pushVersion: 2 }))).status).toBe(400);
    expect((await post(JSON.stringify(request), { "x-weir-namespace": "" })).status).toBe(400);
    const forbidden = await post(JSON.stringify(request), { authorization: "Bearer mallory" });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { error: string }).error).toBe("forbidden");
    expect((await fetch(url)).status).toBe(405);

    const viaFetch = await processor.handleFetch(
      new Request("http://app.invalid/mutate", {
        method: "POST",
        headers: { "x-weir-namespace": "app", authorization: "alice" },
        body: JSON.stringify(push([{ id: 1, name: "createTodo", args: { id: "h2", title: "fetch" } }])),
      }),
    );
    expect(viaFetch.status).toBe(200);
    expect(
      ((await viaFetch.json()) as { mutations: Array<{ result: unknown }> }).mutations[0]!.result,
    ).toEqual({});
    expect((await titles()).filter((id) => id.startsWith("h"))).toEqual(["h1", "h2"]);
  });
});
