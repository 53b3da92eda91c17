import type { SqlAdapter } from "@weir/engine-wasm";
import { expect, it } from "vitest";
import { memoryStorage, memoryStore, testEngine, testHost } from "../../test/test-host.js";

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
  const engine = await testEngine();
  const renewals = engine.renewals;
  const flag = { broken: false };
  const opened: string[] = [];
  const host = await testHost(
    {
      schema: { tables: { note: { columns: { id: "string" }, primaryKey: ["id"] } } },
      mutators: { noop() {} },
      authenticate: () => ({ userID: "alice" }),
    },
    {
      storage: memoryStorage((namespace) => {
        opened.push(namespace);
        return memoryStore((db) => (namespace === "bad" ? breakable(db, flag) : db));
      }),
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
  expect(engine.renewals).toBe(renewals + 1);
  // The other namespace, on the same engine, is served as ever.
  expect((await pull("good")).status).toBe(200);
  flag.broken = false;
  expect((await pull("bad")).status).toBe(200);
  expect(opened).toEqual(["good", "bad", "bad"]);
  await host.close();
});
