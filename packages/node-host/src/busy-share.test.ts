import { describe, expect, it } from "vitest";
import { BusyShare } from "./busy-share.js";

describe("BusyShare", () => {
  const clocked = (countAlone = false) => {
    let now = 0;
    const share = new BusyShare({ clock: () => now, countAlone });
    /** `ms` of the worker's time go to a step of `namespace`, which then ends. */
    const step = (namespace: string, ms: number) => {
      now += ms;
      return share.step(namespace, ms);
    };
    return { step, idle: (ms: number) => (now += ms) };
  };

  it("counts a namespace whose steps held more than half a second its neighbours stepped in, once a window", () => {
    const { step, idle } = clocked();
    expect(step("quiet", 1)).toBeNull();
    // Twelve steps of 40 ms: 480 ms, then 520 ms, past half the window.
    for (let i = 0; i < 12; i++) expect(step("busy", 40)).toBeNull();
    expect(step("busy", 40)).toBe(520);
    expect(step("busy", 40)).toBeNull();
    // The next window (a second after the first began) counts it again.
    idle(500);
    expect(step("quiet", 1)).toBeNull();
    const counts = Array.from({ length: 14 }, () => step("busy", 40)).filter((held) => held !== null);
    expect(counts).toEqual([520]);
  });

  it("does not count a namespace alone on its worker, or one that left it idle", () => {
    const { step, idle } = clocked();
    for (let i = 0; i < 24; i++) expect(step("alone", 40)).toBeNull();
    // Half the window at most: 10 steps of 40 ms, then 600 ms idle, another namespace stepping.
    for (let window = 0; window < 3; window++) {
      expect(step("quiet", 1)).toBeNull();
      for (let i = 0; i < 10; i++) expect(step("steady", 40)).toBeNull();
      idle(600);
    }
  });

  it("counts a namespace alone in the overflow worker, so that it stays there while busy", () => {
    const { step } = clocked(true);
    const counts = Array.from({ length: 14 }, () => step("alone", 40)).filter((held) => held !== null);
    expect(counts).toEqual([520]);
  });
});
