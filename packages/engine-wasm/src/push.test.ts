import { describe, expect, it } from "vitest";
import { ENGINE_DATABASES } from "../test/databases.js";
import { Namespace, todoSchema } from "../test/fixtures.js";

describe.each(ENGINE_DATABASES)("push steps on $kind ($build engine)", ({ open, load }) => {
  async function namespace() {
    return new Namespace(await load(), open(), todoSchema);
  }

  it("tells apply, replay and out-of-order apart", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    const ref = (mutationID: number) => ({ clientGroupID: "g", clientID: "c", mutationID });
    expect(engine.preflight(db.adapter, ref(1))).toEqual({ status: "apply", lastMutationID: 0 });
    expect(engine.preflight(db.adapter, ref(2))).toEqual({ status: "ooo", lastMutationID: 0 });
    db.transaction(() => engine.finalize(db.adapter, ref(1)));
    expect(engine.preflight(db.adapter, ref(1))).toEqual({ status: "replay", lastMutationID: 1 });
    expect(engine.preflight(db.adapter, ref(2))).toEqual({ status: "apply", lastMutationID: 1 });
  });

  it("preflights a batch in one call, as if each mutation found next were processed", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    db.transaction(() => engine.finalize(db.adapter, { clientGroupID: "g", clientID: "a", mutationID: 2 }));
    const batch = [
      { clientID: "a", mutationID: 1 },
      { clientID: "a", mutationID: 3 },
      { clientID: "b", mutationID: 1 },
      { clientID: "a", mutationID: 4 },
      { clientID: "b", mutationID: 3 },
      { clientID: "a", mutationID: 4 },
      { clientID: 'quote"tab\there', mutationID: 1 },
    ];
    expect(engine.preflightBatch(db.adapter, "g", batch)).toEqual([
      { status: "replay", lastMutationID: 2 },
      { status: "apply", lastMutationID: 2 },
      { status: "apply", lastMutationID: 0 },
      { status: "apply", lastMutationID: 3 },
      { status: "ooo", lastMutationID: 1 },
      { status: "replay", lastMutationID: 4 },
      { status: "apply", lastMutationID: 0 },
    ]);
  });

  it("finalizes a batch as one version with each client's last id", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    const before = engine.state(db.adapter).watermark;
    db.transaction(() => {
      db.adapter.exec("INSERT INTO todo VALUES ('x', 'u', 'x', 0, 0)", []);
      engine.finalizeBatch(db.adapter, "g", [
        { clientID: "a", mutationID: 1 },
        { clientID: "b", mutationID: 1 },
        { clientID: "a", mutationID: 2 },
      ]);
    });
    expect(engine.state(db.adapter).watermark).toBe(before + 1);
    const pulled = ns.pull({ cookie: before });
    expect(pulled.json.lastMutationIDChanges).toEqual({ a: 2, b: 1 });
    expect(pulled.json.rowsPatch).toHaveLength(1);
  });

  it("takes ids with quotes, backslashes and control characters", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    const ref = { clientGroupID: 'g"\\', clientID: 'tab\t"quote\\ \u0001 ünï', mutationID: 1 };
    db.transaction(() => engine.finalize(db.adapter, ref));
    expect(engine.preflight(db.adapter, ref)).toEqual({ status: "replay", lastMutationID: 1 });
    expect(engine.clients(db.adapter)).toContainEqual(
      expect.objectContaining({ clientID: ref.clientID, lastMutationID: 1 }),
    );
  });

  it("reads a group's last mutation ids for its owner only", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    db.transaction(() => {
      engine.claimGroup(db.adapter, "g", "alice");
      engine.claimGroup(db.adapter, "other", "alice");
      engine.finalizeBatch(db.adapter, "g", [
        { clientID: "a", mutationID: 3 },
        { clientID: 'q"\\t', mutationID: 1 },
      ]);
      engine.finalize(db.adapter, { clientGroupID: "other", clientID: "z", mutationID: 7 });
    });
    expect(engine.groupMutationIDs(db.adapter, "g", "alice")).toEqual({ a: 3, 'q"\\t': 1 });
    expect(engine.groupMutationIDs(db.adapter, "g", "mallory")).toEqual({});
    expect(engine.groupMutationIDs(db.adapter, "unknown", "alice")).toEqual({});
  });

  it("keeps the same client id in two groups apart", async () => {
    const ns = await namespace();
    ns.db.transaction(() =>
      ns.engine.finalize(ns.db.adapter, { clientGroupID: "g1", clientID: "c", mutationID: 1 }),
    );
    expect(ns.engine.preflight(ns.db.adapter, { clientGroupID: "g2", clientID: "c", mutationID: 1 })).toEqual(
      {
        status: "apply",
        lastMutationID: 0,
      },
    );
  });

  it("advances the id of a mutation whose writes were rolled back, without its writes", async () => {
    const ns = await namespace();
    const { engine, db } = ns;
    const ref = { clientGroupID: "g", clientID: "c", mutationID: 1 };
    expect(() =>
      db.transaction(() => {
        db.adapter.exec("INSERT INTO todo VALUES ('a', 'u', 'x', 0, 0)", []);
        throw new Error("the mutator refused");
      }),
    ).toThrow("refused");
    db.transaction(() => engine.finalize(db.adapter, ref));
    const result = ns.pull({ cookie: 0 });
    expect(result.json).toEqual({ cookie: 1, lastMutationIDChanges: { c: 1 }, rowsPatch: [] });
    expect(engine.state(db.adapter).changes).toBe(0);
  });
});
