import { describe, expect, it } from "vitest";
import type { Claims } from "../auth/claims.js";
import { namedQueryShapes } from "./query-shapes.js";
import { resolveConfig } from "./resolve-config.js";
import type { WeirConfig } from "./weir-config.js";

const byChannel = (channelId: unknown) => ({
  table: "message",
  where: {
    type: "simple",
    op: "=",
    left: { type: "column", name: "channelId" },
    right: { type: "literal", value: channelId },
  },
  orderBy: [["at", "desc"]],
  limit: 20,
});

const queries = {
  all: () => ({ table: "message" }),
  firstArg: (args: unknown) => byChannel((args as string[])[0]),
  channel: (args: unknown) => {
    const { channelId } = args as { channelId: string };
    if (typeof channelId !== "string") throw new Error("channelId must be a string");
    return byChannel(channelId);
  },
  mine: (_args: unknown, claims: Claims) => byChannel(claims.userID),
  refusing: () => {
    throw new Error("no");
  },
};

describe("the named queries' shapes for the install's indexes", () => {
  it("resolves each query with the first args it answers for, and leaves out one it answers for none", () => {
    expect(namedQueryShapes({ queries })).toEqual([
      { name: "all", ast: { table: "message" } },
      { name: "firstArg", ast: byChannel("") },
      { name: "mine", ast: byChannel("") },
    ]);
  });

  it("resolves a query the config declares args of with each of them, and only them", () => {
    const shapes = namedQueryShapes({
      queries,
      queryIndexArgs: { channel: [{ channelId: "c1" }, { channelId: "c2" }], all: [{ unused: true }] },
    });
    expect(shapes.filter((shape) => shape.name === "channel" || shape.name === "all")).toEqual([
      { name: "all", ast: { table: "message" } },
      { name: "channel", ast: byChannel("c1") },
      { name: "channel", ast: byChannel("c2") },
    ]);
  });

  it("is a list of args per query in the config", () => {
    const config = {
      schema: { tables: { message: { columns: { id: "string" }, primaryKey: ["id"] } } },
      mutators: {},
      authenticate: () => null,
      queryIndexArgs: { channel: { channelId: "c1" } },
    } as unknown as WeirConfig;
    expect(() => resolveConfig(config)).toThrow("queryIndexArgs: each query's args must be a list");
  });
});
