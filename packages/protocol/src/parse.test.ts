import { describe, expect, it } from "vitest";
import { parse } from "./parse.js";
import { PullRequest } from "./pull-request.js";
import { PushRequest } from "./push-request.js";
import { ReplicachePushRequest } from "./replicache-push-request.js";
import { UpstreamChangesResponse } from "./upstream-changes-response.js";
import { UpstreamGone } from "./upstream-gone.js";

describe("PullRequest", () => {
  it("accepts null, numeric and decimal-string cookies", () => {
    for (const [cookie, expected] of [
      [null, null],
      [7, 7],
      ["42", 42],
    ] as const) {
      const result = parse(PullRequest, { clientGroupID: "g", clientID: "c", cookie });
      expect(result).toEqual({ ok: true, value: { clientGroupID: "g", clientID: "c", cookie: expected } });
    }
  });

  it.each([-1, 1.5, "01", "1e3", " 1", "99999999999999999", Number.MAX_SAFE_INTEGER + 2])(
    "refuses the cookie %j",
    (cookie) => {
      expect(parse(PullRequest, { clientGroupID: "g", clientID: "c", cookie }).ok).toBe(false);
    },
  );

  it("refuses unknown fields and names the bad field", () => {
    expect(parse(PullRequest, { clientGroupID: "g", clientID: "c", cookie: null, x: 1 }).ok).toBe(false);
    const bad = parse(PullRequest, { clientGroupID: "", clientID: "c", cookie: null });
    expect(bad).toMatchObject({ ok: false, message: expect.stringContaining("clientGroupID") });
  });
});

describe("PushRequest", () => {
  const mutation = { type: "custom", id: 1, clientID: "c", name: "m", args: [{}] };

  it("accepts a batch", () => {
    const result = parse(PushRequest, { clientGroupID: "g", pushVersion: 1, mutations: [mutation] });
    expect(result.ok).toBe(true);
  });

  it.each([0, -1, 1.5, 2 ** 60, "1"])("refuses the mutation id %j", (id) => {
    const result = parse(PushRequest, {
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [{ ...mutation, id }],
    });
    expect(result.ok).toBe(false);
  });

  it("refuses args that are not an array", () => {
    const result = parse(PushRequest, {
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [{ ...mutation, args: {} }],
    });
    expect(result.ok).toBe(false);
  });
});

describe("ReplicachePushRequest", () => {
  it("accepts what the stock client sends, extra fields included", () => {
    const result = parse(ReplicachePushRequest, {
      pushVersion: 1,
      clientGroupID: "g",
      profileID: "p",
      schemaVersion: "",
      mutations: [{ clientID: "c", id: 3, name: "createTodo", args: { id: "t" }, timestamp: 12.5 }],
      somethingNew: true,
    });
    expect(result.ok).toBe(true);
  });
});

describe("UpstreamChangesResponse", () => {
  it("reads watermarks as bigints, numbers while safe and decimal strings beyond", () => {
    const result = parse(UpstreamChangesResponse, {
      watermark: "18446744073709551615",
      changes: [
        { watermark: 42, tableName: "t", op: "INSERT", rowData: { id: 1 }, oldData: null },
        { watermark: "9007199254740993", tableName: "t", op: "DELETE", rowData: null, oldData: { id: 1 } },
      ],
    });
    expect(result).toMatchObject({
      ok: true,
      value: {
        watermark: 18446744073709551615n,
        changes: [{ watermark: 42n }, { watermark: 9007199254740993n }],
      },
    });
  });

  it.each([-1, 1.5, "01", "18446744073709551616", "1e3"])("refuses the watermark %j", (watermark) => {
    expect(parse(UpstreamChangesResponse, { watermark, changes: [] }).ok).toBe(false);
  });

  it("refuses an unknown op and names where it is", () => {
    const result = parse(UpstreamChangesResponse, {
      watermark: 1,
      changes: [{ watermark: 1, tableName: "t", op: "UPSERT", rowData: {}, oldData: null }],
    });
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining("changes.0.op") });
  });
});

describe("UpstreamGone", () => {
  it("accepts the 410 body with its message", () => {
    expect(parse(UpstreamGone, { error: "gone", oldest: 7, message: "resnapshot" })).toEqual({
      ok: true,
      value: { error: "gone", oldest: 7n },
    });
  });
});

describe("PullRequest queries", () => {
  const base = { clientGroupID: "g", clientID: "c", cookie: null };

  it("accepts a query patch of puts by name, dels and clear", () => {
    const queries = {
      patch: [
        { op: "put", hash: "h1", name: "channelMessages", args: { channelId: "c1" } },
        { op: "del", hash: "h0" },
        { op: "clear" },
      ],
    };
    expect(parse(PullRequest, { ...base, queries })).toEqual({ ok: true, value: { ...base, queries } });
  });

  it("refuses a raw AST, naming it", () => {
    const queries = { patch: [{ op: "put", hash: "h1", name: "q", ast: { table: "message" } }] };
    expect(parse(PullRequest, { ...base, queries })).toEqual({
      ok: false,
      message: expect.stringContaining(
        "queries.patch.0.ast: clients send a query's name and args: raw query ASTs are refused",
      ),
    });
  });
});
