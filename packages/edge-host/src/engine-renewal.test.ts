import { afterAll, beforeAll, expect, it } from "vitest";
import { startWorkerd, type Workerd } from "../test/workerd.js";

let w: Workerd;
beforeAll(async () => {
  w = await startWorkerd();
});
afterAll(() => w.dispose());

it("the engine replaces its instance in workerd, from the module the Worker imports", async () => {
  const answer = await fetch(`${w.url}/__engine-renewal`);
  expect(answer.status).toBe(200);
  const { renewals, memoryBytes } = (await answer.json()) as { renewals: number; memoryBytes: number };
  expect(renewals).toBe(3);
  expect(memoryBytes).toBeGreaterThan(0);
});
