import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, postJson, pushOne, startTestServer, type TestServer } from "../../test/test-server.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";
import { UsageError } from "../cli-error.js";
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

describe("weir admin against a running server", () => {
  let server: TestServer;
  let ns: string;
  const env = { WEIR_ADMIN_KEY: ADMIN_KEY };

  beforeAll(async () => {
    server = await startTestServer();
    ns = `${server.origin}/adminns`;
  });

  afterAll(() => server.dispose());

  it("shows status in human form and as JSON", async () => {
    await pushOne(ns, "alice", { clientID: "c1", id: 1, name: "benchPut", args: { id: "a", value: 1 } });
    const human = await runWeir(["admin", ns, "status"], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ {2}watermark:\s+1$/m);
    const json = await runWeir(["admin", ns, "status", "--json", "--admin-key", ADMIN_KEY]);
    expect(json.code).toBe(0);
    expect(jsonOf(json)).toMatchObject({ engine: { watermark: 1 }, writer: { enabled: true } });
  });

  it("switches the writer off (push answers 503) and on again", async () => {
    const off = await runWeir(["admin", ns, "writer", "off", "--json"], { env });
    expect(off.code).toBe(0);
    expect(jsonOf(off)).toMatchObject({ enabled: false });
    const refused = await pushOne(ns, "alice", {
      clientID: "c1",
      id: 2,
      name: "benchPut",
      args: { id: "b", value: 2 },
    });
    expect(refused.status).toBe(503);
    expect(jsonOf(await runWeir(["admin", ns, "writer", "--json"], { env }))).toMatchObject({
      enabled: false,
    });
    expect((await runWeir(["admin", ns, "writer", "on"], { env })).code).toBe(0);
    const accepted = await pushOne(ns, "alice", {
      clientID: "c1",
      id: 2,
      name: "benchPut",
      args: { id: "b", value: 2 },
    });
    expect(accepted.status).toBe(200);
  });

  it("sets the retention, and it shows in status", async () => {
    const run = await runWeir(["admin", ns, "retention", "1", "--json"], { env });
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({ retainChanges: 1 });
    expect(jsonOf(await runWeir(["admin", ns, "status", "--json"], { env }))).toMatchObject({
      retainChanges: 1,
      engine: { floor: 1 },
    });
  });

  it("arms a one-shot fault that fails the next push, and clears faults", async () => {
    expect((await runWeir(["admin", ns, "fault", "push_before_mutation", "error"], { env })).code).toBe(0);
    const failed = await pushOne(ns, "alice", {
      clientID: "c1",
      id: 3,
      name: "benchPut",
      args: { id: "c", value: 3 },
    });
    expect(failed.status).toBe(500);
    expect((await runWeir(["admin", ns, "fault", "push_before_mutation", "quota"], { env })).code).toBe(0);
    const cleared = await runWeir(["admin", ns, "fault", "clear", "--json"], { env });
    expect(jsonOf(cleared)).toMatchObject({ faults: {} });
    const ok = await pushOne(ns, "alice", {
      clientID: "c1",
      id: 3,
      name: "benchPut",
      args: { id: "c", value: 3 },
    });
    expect(ok.status).toBe(200);
  });

  it("invalidates: the next pull of a caught-up client resets", async () => {
    const first = await postJson(
      `${ns}/pull`,
      { clientGroupID: "group-alice", clientID: "c1", cookie: null },
      { authorization: "alice" },
    );
    const cookie = (first.body as { cookie: number }).cookie;
    expect((await runWeir(["admin", ns, "invalidate"], { env })).code).toBe(0);
    const after = await postJson(
      `${ns}/pull`,
      { clientGroupID: "group-alice", clientID: "c1", cookie },
      { authorization: "alice" },
    );
    const patch = (after.body as { rowsPatch: { op: string }[] }).rowsPatch;
    expect(patch[0]).toEqual({ op: "clear" });
    expect(patch.filter((op) => op.op === "put")).toHaveLength(3);
  });

  it("fails with exit 1 and the server's answer for a wrong key or no key", async () => {
    const wrong = await runWeir(["admin", ns, "status", "--json"], {
      env: { WEIR_ADMIN_KEY: "not-the-key-at-all" },
    });
    expect(wrong.code).toBe(1);
    expect(jsonOf(wrong)).toMatchObject({ error: "http_error", status: 403 });
    const none = await runWeir(["admin", ns, "status"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/answered 40[13]/);
  });
});
