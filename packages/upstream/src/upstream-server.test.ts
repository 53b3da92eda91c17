import { UpstreamCallError } from "@weir/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema, tempFile } from "../test/fixtures.js";
import { sqliteUpstream } from "./sqlite-upstream.js";
import { createUpstreamServer, type UpstreamServer } from "./upstream-server.js";

describe("createUpstreamServer", () => {
  const alpha = sqliteUpstream({ file: tempFile(), schema, keepWatermarks: 1 });
  const beta = sqliteUpstream({ file: tempFile(), schema });
  /** A source that is busy: it asks callers to come back in 3 s. */
  const busy = {
    changes: async () => {
      throw new UpstreamCallError(503, "busy", "try later", 2_500);
    },
    snapshotPage: async () => {
      throw new UpstreamCallError(503, "busy", "try later");
    },
  };
  let server: UpstreamServer;
  let url = "";
  beforeAll(async () => {
    server = createUpstreamServer({
      source: (namespace) => ({ alpha, beta, busy })[namespace] ?? null,
      token: "secret",
    });
    url = (await server.listen()).url;
  });
  afterAll(async () => {
    await server.close();
    alpha.close();
    beta.close();
  });
  const get = async (path: string, token = "secret") => {
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, json: await response.json() };
  };

  it("serves each namespace's source under its own base URL", async () => {
    alpha.db.prepare("INSERT INTO todo VALUES ('a', 'u', 1, 2.5)").run();
    beta.db.prepare("INSERT INTO todo VALUES ('b', 'u', 0, 0)").run();
    expect(await get("/alpha/changes?watermark=0&limit=10")).toEqual({
      status: 200,
      json: {
        watermark: 1,
        changes: [
          {
            watermark: 1,
            tableName: "todo",
            op: "INSERT",
            rowData: { id: "a", owner: "u", done: true, sort: 2.5 },
            oldData: null,
          },
        ],
      },
    });
    expect((await get("/beta/snapshot?table=todo&limit=10")).json).toEqual({
      watermark: 1,
      rows: [{ id: "b", owner: "u", done: false, sort: 0 }],
      nextCursor: null,
    });
  });

  it("refuses a namespace segment that is not a namespace name, never asking the source", async () => {
    const asked: string[] = [];
    const strict = createUpstreamServer({
      source: (namespace) => {
        asked.push(namespace);
        return alpha;
      },
    });
    const base = (await strict.listen()).url;
    try {
      for (const segment of [
        "..%2Fescape",
        "%2E%2E%2F%2E%2E",
        "a%2Fb",
        "nul%00",
        "sp%20ace",
        "x".repeat(65),
      ]) {
        const response = await fetch(`${base}/${segment}/changes?watermark=0`);
        expect(response.status, segment).toBe(400);
        expect(await response.json()).toMatchObject({ error: "bad_request" });
      }
      expect(asked).toEqual([]);
      expect((await fetch(`${base}/ok_name-1/changes?watermark=0`)).status).toBe(200);
      expect(asked).toEqual(["ok_name-1"]);
    } finally {
      await strict.close();
    }
  });

  it("passes a source's refusal on with its status, code and Retry-After", async () => {
    const changes = await fetch(`${url}/busy/changes?watermark=0`, {
      headers: { authorization: "Bearer secret" },
    });
    expect(changes.status).toBe(503);
    expect(changes.headers.get("retry-after")).toBe("3");
    expect(await changes.json()).toEqual({ error: "busy", message: "try later" });
    const snapshot = await fetch(`${url}/busy/snapshot?table=todo`, {
      headers: { authorization: "Bearer secret" },
    });
    expect(snapshot.status).toBe(503);
    expect(snapshot.headers.get("retry-after")).toBeNull();
  });

  it("answers 410 with the oldest watermark it keeps, and JSON errors for bad requests", async () => {
    alpha.db.prepare("INSERT INTO todo VALUES ('x', 'u', 1, 2.5)").run();
    alpha.publish();
    alpha.db.prepare("INSERT INTO todo VALUES ('y', 'u', 1, 2.5)").run();
    alpha.publish();
    expect(await get("/alpha/changes?watermark=0")).toMatchObject({
      status: 410,
      json: { error: "gone", oldest: 2 },
    });
    expect((await get("/alpha/changes?watermark=-1")).status).toBe(400);
    expect((await get("/alpha/changes?watermark=1&limit=0")).status).toBe(400);
    expect((await get("/alpha/changes?watermark=1&limit=100001")).status).toBe(400);
    expect((await get("/alpha/snapshot?limit=3")).status).toBe(400);
    expect((await get("/alpha/snapshot?table=nope")).status).toBe(404);
    expect((await get("/alpha/snapshot?table=todo&cursor=%7B")).status).toBe(400);
    expect((await get("/gamma/changes?watermark=0")).status).toBe(404);
    expect((await get("/alpha/other")).status).toBe(404);
    expect(await get("/alpha/changes?watermark=0", "wrong")).toMatchObject({
      status: 401,
      json: { error: "unauthorized" },
    });
  });
});
