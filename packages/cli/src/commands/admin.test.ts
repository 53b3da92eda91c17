import { describe, expect, it } from "vitest";
import { UsageError } from "../cli-error.js";
import { jsonOf, runWeir } from "../testing/weir-process.js";
import { adminCall } from "./admin.js";

describe("adminCall", () => {
  it("maps each action to its admin route", () => {
    expect(adminCall("status", [])).toEqual({ method: "GET", route: "status" });
    expect(adminCall("writer", [])).toEqual({ method: "GET", route: "writer" });
    expect(adminCall("writer", ["off"])).toEqual({
      method: "POST",
      route: "writer",
      body: { enabled: false },
    });
    expect(adminCall("retention", ["500"])).toEqual({
      method: "POST",
      route: "retention",
      body: { retainChanges: 500 },
    });
    expect(adminCall("visibility", ["on"])).toEqual({
      method: "POST",
      route: "visibility",
      body: { enabled: true },
    });
    expect(adminCall("invalidate", [])).toEqual({ method: "POST", route: "invalidate", body: {} });
    expect(adminCall("fault", ["pull_during_tx", "quota"])).toEqual({
      method: "POST",
      route: "fault",
      body: { point: "pull_during_tx", kind: "quota" },
    });
    expect(adminCall("fault", ["clear"])).toEqual({ method: "POST", route: "fault", body: { clear: true } });
  });

  it.each([
    ["writer", ["maybe"]],
    ["retention", ["-1"]],
    ["retention", ["1.5"]],
    ["retention", []],
    ["fault", ["nowhere", "error"]],
    ["fault", ["pull_during_tx", "boom"]],
    ["status", ["extra"]],
    ["reboot", []],
  ])("refuses %s %j as a usage error", (action, args) => {
    expect(() => adminCall(action, args)).toThrow(UsageError);
  });
});

describe("weir admin (usage)", () => {
  it("refuses a URL without a namespace, exit 2", async () => {
    const run = await runWeir(["admin", "http://127.0.0.1:4848", "status"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("must name a namespace");
  });

  it("refuses a bad action, exit 2", async () => {
    const run = await runWeir(["admin", "http://127.0.0.1:4848/todo", "retention", "lots"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("retention takes a whole number");
  });

  it("fails with exit 1 when no server answers", async () => {
    const run = await runWeir(["admin", "http://127.0.0.1:9/todo", "status", "--json"]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({ error: "unreachable" });
  });
});
