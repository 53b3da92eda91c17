import { describe, expect, it } from "vitest";
import { MAX_QUERY_DEPTH, parseQueryAST } from "./query-ast.js";

const eq = (name: string, value: unknown) => ({
  type: "simple",
  op: "=",
  left: { type: "column", name },
  right: { type: "literal", value },
});

describe("parseQueryAST", () => {
  it("accepts the subset: conditions, subqueries, related, orderBy, limit, start", () => {
    const ast = {
      table: "message",
      where: {
        type: "and",
        conditions: [
          eq("channelId", "c1"),
          {
            type: "simple",
            op: "IN",
            left: { type: "column", name: "type" },
            right: { type: "literal", value: ["a", "b"] },
          },
          {
            type: "correlatedSubquery",
            op: "NOT EXISTS",
            flip: false,
            related: {
              system: "client",
              correlation: { parentField: ["creatorId"], childField: ["id"] },
              subquery: { table: "user", alias: "zsubq_user", where: eq("banned", true) },
            },
          },
        ],
      },
      related: [
        {
          correlation: { parentField: ["creatorId"], childField: ["id"] },
          subquery: { table: "user", alias: "author", limit: 1 },
          hidden: false,
        },
      ],
      orderBy: [
        ["createdAt", "desc"],
        ["id", "asc"],
      ],
      limit: 50,
      start: { row: { createdAt: 10, id: "m9" }, exclusive: true },
    };
    expect(parseQueryAST(ast)).toEqual({ ok: true, value: ast });
  });

  it.each([
    [
      { table: "t", where: { type: "scalarSubquery", op: "=" } },
      "where",
      '"scalarSubquery" conditions are not supported',
    ],
    [
      { table: "t", where: { ...eq("a", 1), op: "SIMILAR" } },
      "where.op",
      'the operator "SIMILAR" is not supported',
    ],
    [
      { table: "t", where: { ...eq("a", 1), right: { type: "static", anchor: "authData", field: "sub" } } },
      "where.right",
      'a literal, not "static"',
    ],
    [
      { table: "t", where: { ...eq("a", 1), right: { type: "column", name: "b" } } },
      "where.right",
      'a literal, not "column"',
    ],
    [{ table: "t", schema: "public" }, "schema", '"schema" is not part of the supported query AST'],
    [{ table: "t", limit: -1 }, "limit", ""],
    [{ table: "t", orderBy: [["a", "up"]] }, "orderBy.0.1", "asc or desc"],
  ])("refuses %j naming the part", (ast, path, message) => {
    const result = parseQueryAST(ast);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message.startsWith(`${path}`)).toBe(true);
      expect(result.message).toContain(message);
    }
  });

  it("refuses an AST nested past the bound before validating it", () => {
    let where: unknown = eq("a", 1);
    for (let i = 0; i < MAX_QUERY_DEPTH; i++) where = { type: "and", conditions: [where] };
    const result = parseQueryAST({ table: "t", where });
    expect(result).toEqual({ ok: false, message: expect.stringContaining("nests deeper") });
  });
});
