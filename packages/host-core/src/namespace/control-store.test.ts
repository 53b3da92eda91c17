import { describe, expect, it } from "vitest";
import { memoryStore } from "../../test/test-host.js";
import { CONTROL_TABLE, ControlStore } from "./control-store.js";

describe("ControlStore", () => {
  it("keeps knobs and counters in the namespace's database, for the next open", () => {
    const store = memoryStore();
    const first = ControlStore.open(store);
    expect(first.knobs).toMatchObject({ writerEnabled: true, retainChanges: null, faults: {} });
    first.set("retainChanges", 7);
    first.set("faults", { push_before_mutation: "error", pull_after_commit: "quota" });
    first.counters.pulls = 3;
    first.saveCounters();
    first.disarm("push_before_mutation");
    const second = ControlStore.open(store);
    expect(second.knobs).toMatchObject({ retainChanges: 7, faults: { pull_after_commit: "quota" } });
    expect(second.counters.pulls).toBe(3);
    expect(store.db.query(`SELECT count(*) FROM ${CONTROL_TABLE}`, [])).toEqual([[3]]);
  });

  it("changes a knob in memory only once it is stored", () => {
    const store = memoryStore();
    const control = ControlStore.open(store);
    store.db.exec(`DROP TABLE ${CONTROL_TABLE}`, []);
    expect(() => control.set("writerEnabled", false)).toThrow();
    expect(control.knobs.writerEnabled).toBe(true);
  });
});
