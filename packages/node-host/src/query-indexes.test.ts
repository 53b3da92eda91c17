import { join } from "node:path";
import { type Schema, tableIndexes } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import type { QueryDefinition } from "@weir/host-core";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type NodeHostOptions } from "./index.js";

// The indexes the config's named queries need are in a namespace's file from its install on,
// before any client puts a query: the first put never builds one on a big table.

const schema: Schema = {
  tables: {
    item: { columns: { id: "string", rank: "integer" }, primaryKey: ["id"] },
    tag: { columns: { id: "string", itemId: "string", label: "string" }, primaryKey: ["id"] },
  },
};

const queries: Record<string, QueryDefinition> = {
  // The reported query: items with a tag of this label, by id, four of them.
  tagged: (args) => ({
    table: "item",
    orderBy: [["id", "asc"]],
    limit: 4,
    where: {
      type: "correlatedSubquery",
      op: "EXISTS",
      related: {
        correlation: { parentField: ["id"], childField: ["itemId"] },
        subquery: {
          table: "tag",
          where: {
            type: "simple",
            op: "=",
            left: { type: "column", name: "label" },
            right: { type: "literal", value: (args as string[])[0] },
          },
        },
      },
    },
  }),
};

const mutators = {
  note(tx: { exec(sql: string, params?: unknown[]): number }, args: { id: string }) {
    tx.exec("INSERT INTO item VALUES (?, 0)", [args.id]);
  },
};

const ADMIN_KEY = "indexes-admin-key";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function start(dataDir: string, options: Partial<NodeHostOptions> = {}) {
  const server = createServer({
    schema,
    mutators: mutators as unknown as NodeHostOptions["mutators"],
    devAuth: true,
    adminKey: ADMIN_KEY,
    dataDir,
    logger: memoryLogger(),
    ...options,
  });
  const { url } = await server.listen();
  closers.push(() => server.close());
  return { url, close: () => server.close() };
}

/** A push that opens (and so installs) the namespace; no query is put. */
async function push(url: string, ns: string) {
  const response = await fetch(`${url}/${ns}/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify({
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [{ type: "custom", id: 1, clientID: "c", name: "note", args: [{ id: "i1" }] }],
    }),
  });
  expect(response.status).toBe(200);
}

function fileIndexes(dataDir: string, ns: string) {
  const db = new Database(join(dataDir, `${ns}.sqlite`), { readonly: true });
  try {
    return tableIndexes(betterSqliteAdapter(db));
  } finally {
    db.close();
  }
}

describe("indexes from the config's named queries", () => {
  it("are created at install, before any query is put, and the admin status lists them", async () => {
    const { url } = await start(tempDir(), { queries });
    await push(url, "a");
    const status = await fetch(`${url}/a/admin/status`, { headers: { "x-admin-key": ADMIN_KEY } });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { indexes: unknown }).indexes).toEqual([
      {
        name: "_weir_qx:tag(itemId,label)",
        table: "tag",
        columns: '"itemId", "label"',
        derived: true,
        query: "tagged",
      },
    ]);
  });

  it("leave out a query the engine cannot answer, logged, and index the others", async () => {
    const logger = memoryLogger();
    const missing: QueryDefinition = () => ({ table: "item", orderBy: [["price", "asc"]], limit: 3 });
    const dataDir = tempDir();
    const { url } = await start(dataDir, { queries: { ...queries, missing }, logger });
    await push(url, "a");
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "query not indexed at install",
        query: "missing",
        error: expect.stringContaining('item has no column "price"'),
      }),
    );
    const status = await fetch(`${url}/a/admin/status`, { headers: { "x-admin-key": ADMIN_KEY } });
    expect(
      ((await status.json()) as { indexes: Array<{ query: string }> }).indexes.map((i) => i.query),
    ).toEqual(["tagged"]);
  });

  it("come with a query the config gains, at the namespace's next open, but for one the app's index serves", async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    await push(first.url, "a");
    await push(first.url, "b");
    await first.close();
    expect(fileIndexes(dataDir, "a")).toEqual([]);
    const db = new Database(join(dataDir, "b.sqlite"));
    db.exec("CREATE INDEX tag_by_item ON tag (itemId, label)");
    db.close();
    const top: QueryDefinition = () => ({ table: "item", orderBy: [["rank", "desc"]], limit: 10 });
    const second = await start(dataDir, { queries: { ...queries, top } });
    await push(second.url, "a");
    await push(second.url, "b");
    await second.close();
    expect(fileIndexes(dataDir, "a").map((index) => [index.name, index.query])).toEqual([
      ["_weir_qx:item(rank-)", "top"],
      ["_weir_qx:tag(itemId,label)", "tagged"],
    ]);
    expect(fileIndexes(dataDir, "b").map((index) => [index.name, index.query])).toEqual([
      ["_weir_qx:item(rank-)", "top"],
      ["tag_by_item", null],
    ]);
  });
});
