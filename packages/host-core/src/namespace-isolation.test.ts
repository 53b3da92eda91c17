import { readFile } from "node:fs/promises";
import { type Engine, engineWasmUrl, loadEngine, type SqlAdapter } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import type { NamespaceStore } from "./ports/storage.js";
import { TimerScheduler } from "./timer-scheduler.js";
import { createWeirHost } from "./weir-host.js";

/**
 * An adapter over a real database that, while `broken` is set, answers the engine's read of the
 * clients' last mutation ids with one column instead of two: the engine then fails inside (an
 * index out of range aborts it), as it would on a bug.
 */
function breakable(db: SqlAdapter, flag: { broken: boolean }): SqlAdapter {
  return {
    query(sql, params) {
      const rows = db.query(sql, params);
      return flag.broken && sql.includes("FROM _weir_clients") ? rows.map((row) => row.slice(0, 1)) : rows;
    },
    exec: (sql, params) => db.exec(sql, params),
  };
}

it("an engine failure in one namespace fails that request only, and the namespace is opened afresh", async () => {
  const engine: Engine = await loadEngine(await readFile(engineWasmUrl));
  const flag = { broken: false };
  const opened: string[] = [];
  const host = createWeirHost(
    {
      schema: { tables: { note: { columns: { id: "string" }, primaryKey: ["id"] } } },
      mutators: { noop() {} },
      authenticate: () => ({ userID: "alice" }),
    },
    {
      engine,
      storage: {
        closesWhenIdle: false,
        open(namespace): NamespaceStore {
          opened.push(namespace);
          const raw = new Database(":memory:");
          const run = raw.transaction((fn: () => unknown) => fn());
          const db = betterSqliteAdapter(raw);
          return {
            db: namespace === "bad" ? breakable(db, flag) : db,
            transaction: <T>(fn: () => T) => run(fn) as T,
            close: () => raw.close(),
          };
        },
      },
      scheduler: new TimerScheduler(),
      wake: { accept: () => new Response(null, { status: 400 }), send: () => 0, count: () => 0 },
      logger: { log() {} },
    },
  );
  const pull = async (ns: string, cookie: number | null = null) => {
    const response = await host.handle(
      new Request(`http://weir.test/${ns}/pull`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie }),
      }),
    );
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  const push = (ns: string) =>
    host.handle(
      new Request(`http://weir.test/${ns}/push`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          clientGroupID: "g",
          pushVersion: 1,
          mutations: [{ type: "custom", id: 1, clientID: "c", name: "noop", args: [{}] }],
        }),
      }),
    );

  expect((await push("good")).status).toBe(200);
  expect((await push("bad")).status).toBe(200);
  flag.broken = true;
  const failed = await pull("bad");
  expect(failed.status).toBe(500);
  expect(failed.json).toMatchObject({ error: "internal", requestId: expect.any(String) });
  expect(engine.renewals).toBe(1);
  // The other namespace, on the same engine, is served as ever.
  expect((await pull("good")).status).toBe(200);
  flag.broken = false;
  expect((await pull("bad")).status).toBe(200);
  expect(opened).toEqual(["good", "bad", "bad"]);
  await host.close();
});
