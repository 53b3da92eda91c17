import { readFile } from "node:fs/promises";
import { engineWasmUrl, loadEngine } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Claims } from "./claims.js";
import type { WeirConfig } from "./config.js";
import { TimerScheduler } from "./timer-scheduler.js";
import { createWeirHost } from "./weir-host.js";

/** A host over one real SQLite database, authenticating with `authenticate`. */
async function setup(authenticate: WeirConfig["authenticate"]) {
  const raw = new Database(":memory:");
  const run = raw.transaction((fn: () => unknown) => fn());
  const host = createWeirHost(
    {
      schema: { tables: { note: { columns: { id: "string" }, primaryKey: ["id"] } } },
      mutators: {},
      authenticate,
    },
    {
      engine: await loadEngine(await WebAssembly.compile(await readFile(engineWasmUrl))),
      storage: {
        closesWhenIdle: false,
        open: () => ({
          db: betterSqliteAdapter(raw),
          transaction: <T>(fn: () => T) => run(fn) as T,
          close: () => raw.close(),
        }),
      },
      scheduler: new TimerScheduler(),
      wake: { accept: () => new Response(null, { status: 400 }), send: () => 0, count: () => 0 },
      logger: { log() {} },
    },
  );
  const pull = (user = "alice") =>
    host.handle(
      new Request("http://weir.test/ns/pull", {
        method: "POST",
        headers: { authorization: user, "content-type": "application/json" },
        body: JSON.stringify({ clientGroupID: `g-${user}`, clientID: "c", cookie: null }),
      }),
    );
  return { host, pull };
}

describe("WeirHost", () => {
  it("takes claims from an authenticate that answers at once or later, and 401 when it fails", async () => {
    const answers: Record<string, () => Claims | null | Promise<Claims | null>> = {
      sync: () => ({ userID: "sync" }),
      async: async () => ({ userID: "async" }),
      none: () => null,
      later: async () => null,
      throws: () => {
        throw new Error("no");
      },
      rejects: async () => {
        throw new Error("no");
      },
    };
    const { host, pull } = await setup((request) => answers[request.headers.get("authorization")!]!());
    const statuses = Object.fromEntries(
      await Promise.all(Object.keys(answers).map(async (user) => [user, (await pull(user)).status])),
    );
    expect(statuses).toEqual({ sync: 200, async: 200, none: 401, later: 401, throws: 401, rejects: 401 });
    await host.close();
  });

  it("closes only once the requests in flight have their answers, refusing new ones meanwhile", async () => {
    let letThrough: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    const { host, pull } = await setup(async (request) => {
      const user = request.headers.get("authorization")!;
      if (user === "slow") await held;
      return { userID: user };
    });
    expect((await pull("alice")).status).toBe(200);
    const inFlight = pull("slow");
    let closed = false;
    const closing = host.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    expect((await pull("alice")).status).toBe(503);
    letThrough();
    expect((await inFlight).status).toBe(200);
    await closing;
    expect(closed).toBe(true);
  });
});
