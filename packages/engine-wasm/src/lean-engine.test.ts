import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, leanTestEngine, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { EngineError } from "./engine-error.js";
import { engineWasmUrl, leanEngineWasmUrl } from "./engine-wasm-url.js";
import type { QueryPatchOp } from "./types.js";

const put: QueryPatchOp = { op: "put", hash: "h1", name: "q", args: [], ast: channelMessages("c1", 2) };
const disabled = expect.objectContaining({ name: "EngineError", code: "queries_disabled" });

/** The SQLite objects a database holds, to tell that a refused call wrote nothing. */
function objects(ns: Namespace): unknown[][] {
  return ns.db.adapter.query("SELECT type, name FROM sqlite_master ORDER BY name", []);
}

describe("the engine's two builds", () => {
  it("say which they are", async () => {
    expect((await testEngine()).queryEngine).toBe(true);
    expect((await leanTestEngine()).queryEngine).toBe(false);
  });

  it("the lean one is a module of at most 64 KiB, the full one's calls without the query engine", () => {
    const lean = statSync(leanEngineWasmUrl).size;
    expect(lean).toBeLessThanOrEqual(64 * 1024);
    expect(lean).toBeLessThan(statSync(engineWasmUrl).size);
    const exports = (url: URL) =>
      WebAssembly.Module.exports(new WebAssembly.Module(readFileSync(url))).map(({ name }) => name);
    expect(exports(leanEngineWasmUrl)).toEqual(exports(engineWasmUrl));
  });
});

describe.each(DATABASES)("the lean engine on $kind", ({ open }) => {
  async function chat() {
    const ns = new Namespace(await leanTestEngine(), open(), chatSchema);
    ns.sql("INSERT INTO channel VALUES ('c1', 'one')");
    ns.sql("INSERT INTO message VALUES ('m1', 'c1', 'u1', 1, 'a')");
    return ns;
  }

  it("refuses a pull that carries queries with queries_disabled, writing nothing", async () => {
    const ns = await chat();
    const before = objects(ns);
    const changes = ns.db.totalChanges();
    expect(() => ns.pull({ cookie: null, queries: { patch: [put] } })).toThrow(disabled);
    expect(() => ns.pull({ cookie: null, queries: { patch: [] } })).toThrow(disabled);
    expect(objects(ns)).toEqual(before);
    expect(ns.db.totalChanges()).toBe(changes);
    // The same group pulls plainly as before.
    expect(ns.pull({ cookie: null }).json.rowsPatch?.length).toBe(3);
  });

  it("refuses named queries at install, and a query's rows, with queries_disabled", async () => {
    const ns = await chat();
    const { engine, db } = ns;
    expect(() =>
      db.transaction(() =>
        engine.install(db.adapter, chatSchema, { queries: [{ name: "q", ast: put.ast }] }),
      ),
    ).toThrow(disabled);
    expect(() => engine.queryRows(db.adapter, put.ast)).toThrow(EngineError);
    expect(() => engine.queryRows(db.adapter, put.ast)).toThrow(disabled);
    // No group pulled by queries here: none stored.
    expect(engine.groupQueries(db.adapter, "g")).toEqual({ version: null, queries: [] });
  });

  it("leaves a database whose clients pulled by queries to the full engine", async () => {
    const db = open();
    const full = new Namespace(await testEngine(), db, chatSchema);
    full.pull({ cookie: null, queries: { patch: [put] } });
    const lean = await leanTestEngine();
    expect(() => db.transaction(() => lean.install(db.adapter, chatSchema))).toThrow(disabled);
  });
});
