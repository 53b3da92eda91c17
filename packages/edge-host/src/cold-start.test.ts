import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, push, send } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

let w: Workerd;
beforeAll(async () => {
  w = await startWorkerd();
});
afterAll(async () => {
  if (process.env.SHOW) console.log(w.output.text);
  await w.dispose();
});

async function tables(ns: string): Promise<string[]> {
  return (await send(w.url, `/__tables/${ns}`)).json.tables;
}

const nativePull = (ns: string, cookie: number | null) =>
  send(w.url, `/${ns}/pull`, {
    user: "alice",
    body: { clientGroupID: "g-alice", clientID: "c-alice", cookie },
  });

const replicachePull = (ns: string, cookie: number | null) =>
  send(w.url, `/${ns}/replicache/pull`, {
    user: "alice",
    body: { pullVersion: 1, schemaVersion: "", profileID: "p", clientGroupID: "g-alice", cookie },
  });

describe("a new namespace's first pull in workerd", () => {
  it("writes nothing and answers what an installed empty namespace answers", async () => {
    // An admin request installs the schema: this namespace is installed and empty.
    expect((await send(w.url, "/lean-installed/admin/status", { headers: ADMIN })).status).toBe(200);
    expect(await tables("lean-installed")).toContain("_weir_state");
    for (const cookie of [null, 0]) {
      const installed = await nativePull("lean-installed", cookie);
      const fresh = await nativePull("lean-native", cookie);
      expect(fresh.status).toBe(200);
      expect(fresh.json).toEqual(installed.json);
      const installedReplicache = await replicachePull("lean-installed", cookie);
      const freshReplicache = await replicachePull("lean-replicache", cookie);
      expect(freshReplicache.status).toBe(200);
      expect(freshReplicache.json).toEqual(installedReplicache.json);
    }
    expect(await tables("lean-native")).toEqual([]);
    expect(await tables("lean-replicache")).toEqual([]);
    // A cookie the namespace never gave is refused alike.
    expect((await nativePull("lean-native", 4)).status).toBe(409);
    expect((await nativePull("lean-installed", 4)).status).toBe(409);
    expect(await tables("lean-native")).toEqual([]);
  });

  it("gives a pull from the first cookie exactly what a later push wrote", async () => {
    const first = await nativePull("lean-then-push", null);
    expect(first.json).toEqual({ cookie: 0, lastMutationIDChanges: {}, rowsPatch: [{ op: "clear" }] });
    expect((await push(w.url, "lean-then-push", "alice", 1, { id: "t1", text: "one" })).status).toBe(200);
    expect(await tables("lean-then-push")).toContain("_weir_state");
    const next = await nativePull("lean-then-push", first.json.cookie);
    expect(next.status).toBe(200);
    expect(next.json.lastMutationIDChanges).toEqual({ "c-alice": 1 });
    expect(next.json.rowsPatch.map((op: { op: string }) => op.op)).toEqual(["put"]);
    expect(next.json.rowsPatch[0].value).toMatchObject({ id: "t1", text: "one", owner: "alice" });
  });
});
