import type { PullResult, SqlAdapter } from "@weir/engine-wasm";
import { afterEach, describe, expect, it } from "vitest";
import { memoryStorage, memoryStore, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";
import { TimerScheduler } from "../ports/timer-scheduler.js";
import { CaughtUpPulls } from "./caught-up-pulls.js";

const ADMIN_KEY = "an-admin-key-for-tests";

const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string", text: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args) {
      const { id, text } = args as { id: string; text: string };
      tx.upsert("note", { id, text });
    },
  },
  authenticate: (request) => {
    const user = request.headers.get("authorization");
    return user ? { userID: user } : null;
  },
  adminKey: ADMIN_KEY,
};

/** A host over one real SQLite database whose statements are counted. */
async function setup() {
  const counted = { statements: 0 };
  const count = (inner: SqlAdapter): SqlAdapter => ({
    query(sql, params) {
      counted.statements++;
      return inner.query(sql, params);
    },
    exec(sql, params) {
      counted.statements++;
      return inner.exec(sql, params);
    },
  });
  const scheduler = new TimerScheduler();
  const host = await testHost(config, { storage: memoryStorage(() => memoryStore(count)), scheduler });
  hosts.push({ host, scheduler });
  const call = async (path: string, user: string, body: unknown) => {
    const response = await host.handle(
      new Request(`http://weir.test/ns/${path}`, {
        method: "POST",
        headers: { authorization: user, "x-admin-key": ADMIN_KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { call, counted };
}

const hosts: { host: WeirHost; scheduler: TimerScheduler }[] = [];
afterEach(async () => {
  for (const { host, scheduler } of hosts.splice(0)) {
    await host.close();
    scheduler.close();
  }
});

const pull = (group: string, cookie: number | null) => ({
  clientGroupID: group,
  clientID: `${group}-c`,
  cookie,
});
const push = (group: string, id: number, row: { id: string; text: string }) => ({
  clientGroupID: group,
  pushVersion: 1,
  mutations: [{ type: "custom", clientID: `${group}-c`, id, name: "put", args: [row], timestamp: 1 }],
});

describe("caught-up pulls", () => {
  it("are answered without SQL once the engine has answered one, in both dialects", async () => {
    const { call, counted } = await setup();
    await call("push", "alice", push("ga", 1, { id: "n1", text: "one" }));
    const first = await call("pull", "alice", pull("ga", null));
    const cookie = first.body.cookie as number;
    const fromEngine = await call("pull", "alice", pull("ga", cookie));
    expect(fromEngine.body).toEqual({ cookie, unchanged: true });

    const before = counted.statements;
    const fromMemory = await call("pull", "alice", pull("ga", cookie));
    expect(fromMemory).toEqual(fromEngine);
    expect(counted.statements).toBe(before);

    const replicache = { ...pull("ga", cookie), pullVersion: 1, profileID: "p", schemaVersion: "" };
    const engineAnswer = await call("replicache/pull", "alice", replicache);
    const beforeMemory = counted.statements;
    expect(await call("replicache/pull", "alice", replicache)).toEqual(engineAnswer);
    expect(engineAnswer.body).toEqual({ cookie, lastMutationIDChanges: {}, patch: [] });
    expect(counted.statements).toBe(beforeMemory);
  });

  it("see every commit: after a push the old cookie gets the change", async () => {
    const { call } = await setup();
    const cookie = (await call("pull", "alice", pull("ga", null))).body.cookie as number;
    await call("pull", "alice", pull("ga", cookie));
    const pushed = await call("push", "alice", push("ga", 1, { id: "n1", text: "one" }));
    const after = await call("pull", "alice", pull("ga", cookie));
    expect(pushed.status).toBe(200);
    expect(after.body.cookie).toBeGreaterThan(cookie);
    expect(after.body.rowsPatch).toEqual([
      { op: "put", tableName: "note", value: { id: "n1", text: "one" } },
    ]);
  });

  it("see an invalidation: the same cookie then gets a reset", async () => {
    const { call } = await setup();
    await call("push", "alice", push("ga", 1, { id: "n1", text: "one" }));
    const cookie = (await call("pull", "alice", pull("ga", null))).body.cookie as number;
    await call("pull", "alice", pull("ga", cookie));
    await call("pull", "alice", pull("ga", cookie));
    expect((await call("admin/invalidate", "alice", {})).status).toBe(200);
    const after = await call("pull", "alice", pull("ga", cookie));
    expect(after.body.rowsPatch).toContainEqual({ op: "clear" });
  });

  it("still refuse another user's client group, to pulls at the current cookie and to pushes", async () => {
    const { call } = await setup();
    const cookie = (await call("pull", "alice", pull("ga", null))).body.cookie as number;
    expect((await call("pull", "alice", pull("ga", cookie))).status).toBe(200);
    expect((await call("pull", "alice", pull("ga", cookie))).status).toBe(200);
    const stolen = await call("pull", "mallory", pull("ga", cookie));
    expect(stolen.status).toBe(403);
    expect(stolen.body.error).toBe("forbidden");
    expect((await call("push", "alice", push("ga", 1, { id: "n1", text: "mine" }))).status).toBe(200);
    const pushed = await call("push", "mallory", push("ga", 2, { id: "n1", text: "theirs" }));
    expect(pushed.status).toBe(403);
  });
});

const answered = (watermark: number): PullResult =>
  ({
    body: "{}",
    cookie: watermark,
    watermark,
    floor: 0,
    unchanged: false,
    more: false,
  }) as unknown as PullResult;

describe("CaughtUpPulls.behind", () => {
  it("is sure of a null cookie and of one below the watermark remembered, of nothing once forgotten", () => {
    const pulls = new CaughtUpPulls();
    expect(pulls.behind(null)).toBe(true);
    expect(pulls.behind(0)).toBe(false);
    pulls.remember("native", "g", "u", "v", answered(5));
    expect(pulls.behind(4)).toBe(true);
    expect(pulls.behind(5)).toBe(false);
    // A transaction may move the watermark: nothing is known until the engine answers again.
    pulls.forget();
    expect(pulls.behind(4)).toBe(false);
    expect(pulls.behind(null)).toBe(true);
  });
});

describe("CaughtUpPulls.answer", () => {
  it("answers a group only under the visibility its last answer was under", () => {
    const pulls = new CaughtUpPulls();
    const caughtUp = { ...answered(5), unchanged: true, body: '{"cookie":5}' } as PullResult;
    pulls.remember("native", "g", "u", "admin", caughtUp);
    expect(pulls.answer("native", "g", "u", 5, "admin")?.body).toBe('{"cookie":5}');
    expect(pulls.answer("native", "g", "u", 5, "member")).toBeUndefined();
  });
});

describe("CaughtUpPulls.distrust", () => {
  it("answers nothing from memory once a commit failed behind what it learnt, even what it learns next", () => {
    const pulls = new CaughtUpPulls();
    const caughtUp = { ...answered(5), unchanged: true, body: '{"cookie":5}' } as PullResult;
    pulls.remember("native", "g", "u", "v", caughtUp);
    expect(pulls.answer("native", "g", "u", 5, "v")?.body).toBe('{"cookie":5}');
    pulls.distrust();
    expect(pulls.answer("native", "g", "u", 5, "v")).toBeUndefined();
    expect(pulls.knowsOwner("g", "u")).toBe(false);
    pulls.remember("native", "g", "u", "v", caughtUp);
    expect(pulls.answer("native", "g", "u", 5, "v")).toBeUndefined();
  });
});
