import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBuilder, createSchema, defineQueries, defineQuery, string, table, Zero } from "@rocicorp/zero";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { Replicache, type WriteTransaction } from "replicache";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

// What PostgreSQL holds is what the clients hold, at the edges of the types: integers beyond
// 2^53 through clients that read with JSON.parse (the stock Replicache and Zero clients
// included), values a column cannot hold (NaN, Infinity), a JSON null where SQL NULL cannot be.
// A weir Node server replicates a private cluster through an in-process postgresUpstream.

const ADMIN_KEY = "admin-key-for-tests";
const NS = "acme";
const TWO_53 = 2n ** 53n;

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let weir: WeirServer;
let base: string;
const logs: { level: string; fields: Record<string, unknown> }[] = [];

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-values-"));
  mkdirSync(join(dir, "data"));
  await db.sql(`CREATE TABLE big (id bigint PRIMARY KEY, ns text NOT NULL, title text NOT NULL);
    CREATE TABLE measure (id int PRIMARY KEY, ns text NOT NULL, v double precision NOT NULL);
    CREATE TABLE doc (id int PRIMARY KEY, ns text NOT NULL, body jsonb NOT NULL, extra jsonb, data bytea);
    ALTER TABLE big REPLICA IDENTITY FULL;
    ALTER TABLE measure REPLICA IDENTITY FULL;
    ALTER TABLE doc REPLICA IDENTITY FULL;
    CREATE TABLE note (id int PRIMARY KEY, ns text NOT NULL);
    ALTER TABLE note REPLICA IDENTITY FULL;
    INSERT INTO note VALUES (1, 'Acme Corp'), (2, 'x.y'), (3, 'zoë'), (4, 'ann@example.com'),
      (5, repeat('n', 65)), (6, '${NS}'), (7, repeat('n', 64));
    INSERT INTO big VALUES (${TWO_53}, '${NS}', 'two to the 53'), (${TWO_53 + 1n}, '${NS}', 'plus one'),
      (${TWO_53 + 2n}, '${NS}', 'plus two'), (7, '${NS}', 'seven');`);
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["big", "measure", "doc", "note"],
    tenant: { column: "ns" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir.host?.upstreamCommitted(namespaces),
  });
  weir = createServer({
    schema: upstream.schema,
    mutators: {
      // The id as the client pulled it (a decimal string beyond 2^53), used as it came.
      retitle(tx, args: { id: number | string; title: string }) {
        if (!tx.update("big", { id: args.id, title: args.title })) throw new Error(`no row ${args.id}`);
      },
    },
    queries: { allBig: () => ({ table: "big", orderBy: [["id", "asc"]] }) },
    upstream: { source: (namespace) => upstream.source(namespace) },
    devAuth: true,
    adminKey: ADMIN_KEY,
    dataDir: join(dir, "data"),
    logger: { log: (level, fields) => logs.push({ level, fields }) },
  });
  base = `${(await weir.listen()).url}/${NS}`;
});

afterAll(async () => {
  await weir?.close();
  await upstream?.dropReplication();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  rowsPatch: { op: string; tableName?: string; value?: Record<string, unknown> }[];
  pushResponse: { mutations: { result: unknown }[] };
}

interface Status {
  upstream: { stopped: unknown; quarantined: { rows: number; last: Record<string, unknown> | null } };
}

async function post(
  route: string,
  body: unknown,
): Promise<{ status: number; json: Answer; headers: Headers }> {
  const response = await fetch(`${base}/${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify(body),
  });
  // JSON.parse, as every JavaScript client reads an answer.
  return { status: response.status, json: (await response.json()) as Answer, headers: response.headers };
}

/** Every row of `table` a new native client pulls, by the key's text. */
async function pulled(tableName: string): Promise<Map<string, Record<string, unknown>>> {
  const { status, json } = await post("pull", {
    clientGroupID: `g-${Math.random()}`,
    clientID: "c",
    cookie: null,
  });
  expect(status).toBe(200);
  const rows = new Map<string, Record<string, unknown>>();
  for (const op of json.rowsPatch) {
    if (op.op === "put" && op.tableName === tableName && op.value) rows.set(String(op.value.id), op.value);
  }
  return rows;
}

async function status(): Promise<Status> {
  const response = await fetch(`${base}/admin/status`, { headers: { "x-admin-key": ADMIN_KEY } });
  return (await response.json()) as Status;
}

async function push(name: string, args: unknown, clientID = `c-${Math.random()}`) {
  return post("push", {
    clientGroupID: `g-${clientID}`,
    pushVersion: 1,
    mutations: [{ type: "custom", id: 1, clientID, name, args: [args], timestamp: Date.now() }],
  });
}

describe("integers beyond 2^53", () => {
  it("reach a JSON.parse client exactly and distinct, and a mutator given one writes that row", async () => {
    const rows = await pulled("big");
    expect([...rows.keys()].sort()).toEqual([
      "7",
      "9007199254740992",
      "9007199254740993",
      "9007199254740994",
    ]);
    expect(rows.get("9007199254740993")).toEqual({ id: "9007199254740993", ns: NS, title: "plus one" });
    expect(rows.get("7")!.id).toBe(7);

    const answer = await push("retitle", { id: rows.get("9007199254740993")!.id, title: "renamed" });
    expect(answer.json.pushResponse.mutations[0]!.result).toEqual({});
    const after = await pulled("big");
    expect(after.get("9007199254740993")!.title).toBe("renamed");
    expect(after.get("9007199254740992")!.title).toBe("two to the 53");
    expect(after.get("9007199254740994")!.title).toBe("plus two");
  });

  it("reach the stock Replicache client exactly, and its mutation names the right row", async () => {
    const rep = new Replicache({
      name: `values-${Date.now()}`,
      kvStore: "mem",
      auth: "bob",
      pullURL: `${base}/replicache/pull`,
      pushURL: `${base}/replicache/push`,
      pullInterval: null,
      logLevel: "error",
      mutators: {
        async retitle(tx: WriteTransaction, args: { id: string | number; title: string }) {
          const key = `big/${args.id}`;
          const row = (await tx.get(key)) as Record<string, unknown> | undefined;
          if (row) await tx.set(key, { ...row, title: args.title });
        },
      },
    });
    try {
      await rep.pull({ now: true });
      await waitFor(
        async () => (await rep.query((tx) => tx.scan({ prefix: "big/" }).keys().toArray())).length === 4,
      );
      const values = (await rep.query((tx) => tx.scan({ prefix: "big/" }).values().toArray())) as {
        id: unknown;
      }[];
      expect(values.map((value) => value.id).sort()).toEqual([
        7,
        "9007199254740992",
        "9007199254740993",
        "9007199254740994",
      ]);
      const row = (await rep.query((tx) => tx.get("big/9007199254740994"))) as { id: string };
      await rep.mutate.retitle({ id: row.id, title: "from replicache" });
      await rep.push({ now: true });
      await waitFor(async () => {
        await rep.pull({ now: true });
        return (await rep.experimentalPendingMutations()).length === 0;
      });
      const rows = await pulled("big");
      expect(rows.get("9007199254740994")!.title).toBe("from replicache");
      expect(rows.get("9007199254740992")!.title).toBe("two to the 53");
    } finally {
      await rep.close();
    }
  });

  it("reach the stock Zero client exactly and distinct", async () => {
    // Zero's client orders a column's values and cannot compare a number with a string, so the
    // ids here are all beyond 2^53, as snowflake-style ids are (docs/protocol.md).
    await db.sql(`INSERT INTO big VALUES (${2n ** 60n + 1n}, 'zeta', 'a'), (${2n ** 60n + 2n}, 'zeta', 'b'),
      (${2n ** 63n - 1n}, 'zeta', 'c')`);
    // A Zero connection alone does not start the namespace's first ingest: a pull does.
    const zeta = base.replace(`/${NS}`, "/zeta");
    await fetch(`${zeta}/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "carol" },
      body: JSON.stringify({ clientGroupID: "g-zeta", clientID: "c-zeta", cookie: null }),
    });
    const globals = globalThis as Record<string, unknown>;
    globals.WebSocket ??= WebSocket;
    globals.navigator ??= { onLine: true, userAgent: "node" };
    const schema = createSchema({
      tables: [table("big").columns({ id: string(), ns: string(), title: string() }).primaryKey("id")],
    });
    const zql = createBuilder(schema);
    const queries = defineQueries({ allBig: defineQuery(() => zql.big) });
    const z = new Zero({
      cacheURL: zeta,
      userID: "carol",
      auth: "carol",
      schema,
      kvStore: "mem",
      logLevel: "error",
    });
    const view = z.materialize(queries.allBig() as unknown as Parameters<typeof z.materialize>[0]);
    try {
      const rows = await new Promise<readonly { id: unknown }[]>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the rows did not arrive")), 10_000);
        view.addListener((data, resultType) => {
          const found = data as readonly { id: unknown }[];
          if (resultType === "complete" && found.length === 3) {
            clearTimeout(timer);
            resolve([...found]);
          }
        });
      });
      expect(rows.map((row) => row.id).sort()).toEqual([
        "1152921504606846977",
        "1152921504606846978",
        "9223372036854775807",
      ]);
    } finally {
      view.destroy();
      await z.close();
    }
  });
});

describe("values a column cannot hold", () => {
  it("quarantine their rows (counted, logged) while later rows and pushes go on", async () => {
    await db.sql(`INSERT INTO measure VALUES (1, '${NS}', 1), (2, '${NS}', 2)`);
    await waitFor(async () => (await pulled("measure")).size === 2);
    // Legal in PostgreSQL, but a JSON number has no NaN or infinities.
    await db.sql("UPDATE measure SET v = 'NaN' WHERE id = 1");
    await db.sql(`INSERT INTO measure VALUES (3, '${NS}', 'Infinity'), (4, '${NS}', '-Infinity')`);
    await db.sql(`INSERT INTO measure VALUES (5, '${NS}', 5.5)`);
    await waitFor(async () => (await pulled("measure")).has("5"));
    expect([...(await pulled("measure")).values()]).toEqual([
      { id: 2, ns: NS, v: 2 },
      { id: 5, ns: NS, v: 5.5 },
    ]);

    const upstreamStatus = (await status()).upstream;
    expect(upstreamStatus.stopped).toBeNull();
    expect(upstreamStatus.quarantined.rows).toBe(3);
    expect(upstreamStatus.quarantined.last).toMatchObject({
      table: "measure",
      reason: expect.stringMatching(/Infinity/),
    });
    expect(
      logs.some((line) => line.level === "warn" && String(line.fields.msg).startsWith("rows quarantined")),
    ).toBe(true);
    const answer = await push("retitle", { id: 7, title: "after the NaN" });
    expect(answer.status).toBe(200);
    expect(answer.json.pushResponse.mutations[0]!.result).toEqual({});
    expect(answer.headers.get("weir-ingest-stopped")).toBeNull();

    // Fixed in PostgreSQL, the row comes back.
    await db.sql("UPDATE measure SET v = 1.25 WHERE id = 1");
    await waitFor(async () => (await pulled("measure")).has("1"));
    expect((await pulled("measure")).get("1")).toEqual({ id: 1, ns: NS, v: 1.25 });
  });

  it("keep a JSON null in a NOT NULL jsonb column, and bytea reaches clients as lowercase hex", async () => {
    await db.sql(
      `INSERT INTO doc VALUES (1, '${NS}', 'null', NULL, '\\x00ff'), (2, '${NS}', '{"a": [1, null]}', 'null', NULL)`,
    );
    await waitFor(async () => (await pulled("doc")).size === 2);
    const rows = await pulled("doc");
    expect(rows.get("1")).toEqual({ id: 1, ns: NS, body: null, extra: null, data: "00ff" });
    expect(rows.get("2")).toEqual({ id: 2, ns: NS, body: { a: [1, null] }, extra: null, data: null });
    expect((await status()).upstream.stopped).toBeNull();
  });
});

describe("tenant values that are no namespace name", () => {
  it("are counted at start and as they change, with examples, in the upstream's status", async () => {
    const start = (await upstream.status()).tenants;
    expect(start.unservableRows).toBe(5);
    expect(start.examples).toEqual(
      expect.arrayContaining(["Acme Corp", "x.y", "zoë", "ann@example.com", "n".repeat(65)]),
    );
    const before = start.unservableChanges;
    await db.sql(`INSERT INTO note VALUES (8, 'Acme Corp'), (9, 'Ünïcode'), (10, '${NS}')`);
    await waitFor(async () => (await pulled("note")).has("10"));
    const after = (await upstream.status()).tenants;
    expect(after.unservableChanges - before).toBe(2);
    // Namespace names are served as ever.
    expect([...(await pulled("note")).keys()].sort()).toEqual(["10", "6"]);
  });
});
