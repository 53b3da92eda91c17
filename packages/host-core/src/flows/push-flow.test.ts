import { describe, expect, it } from "vitest";
import { headerUser, testService } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import { MutatorError } from "../mutators/mutator-error.js";

const effects: string[] = [];
const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string", text: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args: { id: string; text: string }) {
      tx.upsert("note", args);
      tx.defer(() => {
        effects.push(`put ${args.id}`);
      });
    },
    /** Writes, queues an effect, then refuses: nothing of it may remain. */
    putThenRefuse(tx, args: { id: string }) {
      tx.insert("note", { id: args.id, text: "never" });
      tx.defer(() => {
        effects.push(`refused ${args.id}`);
      });
      throw new MutatorError("no", { id: args.id });
    },
    /** Refuses without writing: the batch needs no second run. */
    refuse() {
      throw new MutatorError("plain no");
    },
  },
  authenticate: headerUser,
};

const push = (mutations: Array<{ id: number; name: string; args?: unknown; clientID?: string }>) => ({
  clientGroupID: "g",
  pushVersion: 1,
  mutations: mutations.map(({ id, name, args = {}, clientID = "c" }) => ({
    type: "custom",
    id,
    clientID,
    name,
    args: [args],
  })),
});

describe("the push flow", () => {
  it("keeps the mutations around a refused one, rolls back only its writes, and runs each effect once", async () => {
    effects.length = 0;
    const { service } = await testService(config);
    const result = await service.push(
      "native",
      push([
        { id: 1, name: "put", args: { id: "a", text: "A" } },
        { id: 2, name: "putThenRefuse", args: { id: "x" } },
        { id: 3, name: "put", args: { id: "b", text: "B" } },
      ]),
      { userID: "u" },
    );
    expect(JSON.parse(result.response.body!)).toEqual({
      pushResponse: {
        mutations: [
          { id: { clientID: "c", id: 1 }, result: {} },
          { id: { clientID: "c", id: 2 }, result: { error: "app", message: "no", details: { id: "x" } } },
          { id: { clientID: "c", id: 3 }, result: {} },
        ],
      },
    });
    expect(service.store.db.query("SELECT id FROM note ORDER BY id", [])).toEqual([["a"], ["b"]]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The first run was rolled back and run again with a savepoint each: effects only of the second.
    expect(effects).toEqual(["put a", "put b"]);
    expect(service.contexts.admin.counters).toMatchObject({ pushes: 1, mutations: 2, appErrors: 1 });
    // All three ids advanced, in one version.
    expect(service.engine.state(service.store.db).watermark).toBe(1);
    const replay = await service.push(
      "native",
      push([{ id: 3, name: "put", args: { id: "c", text: "C" } }]),
      {
        userID: "u",
      },
    );
    expect(JSON.parse(replay.response.body!).pushResponse.mutations[0].result.error).toBe("alreadyProcessed");
  });

  it("needs no second run when the refusing mutator wrote nothing", async () => {
    const { service } = await testService(config);
    const result = await service.push(
      "native",
      push([
        { id: 1, name: "refuse" },
        { id: 2, name: "put", args: { id: "a", text: "A" } },
      ]),
      { userID: "u" },
    );
    expect(
      JSON.parse(result.response.body!).pushResponse.mutations.map((m: { result: object }) => m.result),
    ).toEqual([{ error: "app", message: "plain no" }, {}]);
  });

  it("stops a native batch at an out-of-order id and skips one in Replicache's dialect", async () => {
    const { service } = await testService(config);
    const stopped = await service.push(
      "native",
      push([
        { id: 1, name: "put", args: { id: "a", text: "A" } },
        { id: 3, name: "put", args: { id: "b", text: "B" } },
      ]),
      { userID: "u" },
    );
    expect(JSON.parse(stopped.response.body!).pushResponse).toMatchObject({
      kind: "PushFailed",
      reason: "oooMutation",
      mutationIDs: [{ clientID: "c", id: 3 }],
    });
    const replicache = await service.push(
      "replicache",
      {
        pushVersion: 1,
        clientGroupID: "g",
        mutations: [{ clientID: "c", id: 5, name: "put", args: { id: "z", text: "Z" }, timestamp: 1 }],
      },
      { userID: "u" },
    );
    expect(replicache.response.body).toBe("{}");
    expect(service.store.db.query("SELECT id FROM note ORDER BY id", [])).toEqual([["a"]]);
  });

  it("refuses a push while the writer is disabled, storing nothing", async () => {
    const { service } = await testService(config);
    service.contexts.admin.setKnob("writerEnabled", false);
    await expect(
      service.push("native", push([{ id: 1, name: "put", args: { id: "a", text: "A" } }]), { userID: "u" }),
    ).rejects.toMatchObject({ code: "writer_disabled" });
    expect(service.store.db.query("SELECT count(*) FROM note", [])).toEqual([[0]]);
  });
});
