import { describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS } from "./config-defaults.js";
import { ConfigError } from "./config-error.js";
import { resolveConfig } from "./resolve-config.js";
import type { WeirConfig } from "./weir-config.js";

const valid: WeirConfig = {
  schema: { tables: { todo: { columns: { id: "string", done: "boolean" }, primaryKey: ["id"] } } },
  mutators: { noop() {} },
  authenticate: () => ({ userID: "u" }),
};

function problems(config: unknown): string {
  try {
    resolveConfig(config as WeirConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the config was accepted");
}

describe("resolveConfig", () => {
  it("fills the defaults", () => {
    expect(resolveConfig(valid)).toMatchObject(CONFIG_DEFAULTS);
  });

  it("gives an answer 30 ms, or the query budget when that is less", () => {
    expect(resolveConfig(valid).queryAnswerMs).toBe(30);
    expect(resolveConfig({ ...valid, queryBudgetMs: 10 }).queryAnswerMs).toBe(10);
    expect(resolveConfig({ ...valid, queryBudgetMs: 60_000 }).queryAnswerMs).toBe(30);
    expect(resolveConfig({ ...valid, queryBudgetMs: 10, queryAnswerMs: 45 }).queryAnswerMs).toBe(45);
  });

  it("gives a query 500 ms in all, and at least its budget in one pull", () => {
    expect(resolveConfig(valid).queryTotalBudgetMs).toBe(500);
    expect(resolveConfig({ ...valid, queryTotalBudgetMs: 200 }).queryTotalBudgetMs).toBe(200);
    expect(resolveConfig({ ...valid, queryBudgetMs: 5_000 }).queryTotalBudgetMs).toBe(5_000);
  });

  it("refuses async mutators with a fix in the message", () => {
    expect(problems({ ...valid, mutators: { async save() {} } })).toMatch(
      /mutators\.save: mutators must be synchronous.*tx\.defer/,
    );
  });

  it("names every problem of the schema and the knobs", () => {
    const message = problems({
      ...valid,
      schema: {
        tables: {
          "bad name": { columns: { id: "string" }, primaryKey: ["id"] },
          _weir_own: { columns: { id: "string" }, primaryKey: ["id"] },
          t: { columns: { id: "text" }, primaryKey: ["id"] },
          keyless: { columns: { id: "string" }, primaryKey: ["missing"] },
          empty: { columns: {}, primaryKey: [] },
        },
      },
      authenticate: "yes",
      maxChangeRows: 0,
      wakeWindowMs: 1.5,
      adminKey: "short",
    });
    for (const fragment of [
      "schema.tables.bad name",
      "reserved",
      "schema.tables.t.columns.id",
      "schema.tables.keyless: every primary key column must be a declared column",
      "at least one column",
      "authenticate",
      "maxChangeRows",
      "wakeWindowMs",
      "adminKey",
    ]) {
      expect(message).toContain(fragment);
    }
  });
});
