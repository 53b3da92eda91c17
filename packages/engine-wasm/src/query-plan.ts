import type { CorrelatedSubquery, QueryAST, QueryCondition, QueryLiteralValue } from "@weir/protocol";
import {
  PLAN_AND,
  PLAN_COLUMN,
  PLAN_COMPARE,
  PLAN_EXISTS,
  PLAN_GLOB,
  PLAN_NONE,
  PLAN_NOT_GLOB,
  PLAN_NULL,
  PLAN_OR,
  PLAN_QUERY,
  PLAN_START,
  PLAN_TOKEN_SEPARATOR,
  PLAN_VALUE,
  PLAN_WITNESS,
} from "./abi.js";
import { nodeWitnesses } from "./condition-witnesses.js";
import { EngineError } from "./engine-error.js";
import type { Schema, TableSchema } from "./types.js";

// A query AST (already of the protocol's subset, see @weir/protocol's parseQueryAST) checked
// against the schema and written as the engine's plan text (src/abi.ts), from which the engine
// builds one SQL statement. What SQL means differently from Zero is settled here, where the
// values are known: booleans bind as 0/1, LIKE (case-sensitive in Zero, not in SQLite) becomes
// GLOB, and every ordering ends with the primary key, as Zero's query builder completes it, so
// that a limit always cuts at the same row.

const SQL_OPERATORS: Record<string, string> = {
  LIKE: PLAN_GLOB,
  "NOT LIKE": PLAN_NOT_GLOB,
  ILIKE: "LIKE",
  "NOT ILIKE": "NOT LIKE",
};

class PlanWriter {
  readonly tokens: string[] = [];
  /** The tables the plan reads, in the order the engine's own reading lists them. */
  readonly tables: string[] = [];

  constructor(private readonly schema: Schema) {}

  table(name: string, path: string): TableSchema {
    const table = Object.hasOwn(this.schema.tables, name) ? this.schema.tables[name] : undefined;
    if (!table) throw refusal(path, `the table ${JSON.stringify(name)} is not in the schema`);
    return table;
  }

  column(table: string, name: string, path: string): string {
    if (!Object.hasOwn(this.schema.tables[table]!.columns, name)) {
      throw refusal(path, `${table} has no column ${JSON.stringify(name)}`);
    }
    return PLAN_COLUMN + name;
  }

  /**
   * `kind` is where it sits: the root, a related subquery (or a condition's witnesses, see
   * condition-witnesses.ts), or an EXISTS condition's.
   */
  query(ast: QueryAST, path: string, kind: "root" | "related" | "witness" | "exists"): void {
    const table = this.table(ast.table, `${path}table`);
    if (!this.tables.includes(ast.table)) this.tables.push(ast.table);
    if (ast.start && kind !== "root") throw refusal(`${path}start`, "only the root query may have a start");
    if (ast.related && kind === "exists") {
      throw refusal(`${path}related`, "the subquery of a condition syncs no rows of its own");
    }
    this.tokens.push(
      kind === "witness" ? PLAN_WITNESS : PLAN_QUERY,
      ast.table,
      ast.limit === undefined ? PLAN_NONE : PLAN_VALUE + ast.limit,
    );
    // An EXISTS subquery's order changes nothing; elsewhere it decides where a limit cuts.
    const ordering = kind === "exists" && ast.limit === undefined ? [] : this.ordering(ast, table, path);
    this.tokens.push(String(ordering.length));
    for (const [column, direction] of ordering)
      this.tokens.push(PLAN_COLUMN + column, direction === "asc" ? "A" : "D");
    if (ast.start) {
      this.tokens.push(PLAN_START, ast.start.exclusive ? "1" : "0");
      for (const [column] of ordering) {
        if (!Object.hasOwn(ast.start.row, column)) {
          throw refusal(
            `${path}start.row`,
            `the start row needs a value for ${column}, which orders the query`,
          );
        }
        this.tokens.push(value(ast.start.row[column]!));
      }
    } else this.tokens.push(PLAN_NONE);
    if (ast.where) this.condition(ast.table, ast.where, `${path}where`);
    else this.tokens.push(PLAN_NONE);
    const related: { subquery: CorrelatedSubquery; path: string; kind: "related" | "witness" }[] = (
      ast.related ?? []
    ).map((subquery, i) => ({ subquery, path: `${path}related.${i}.`, kind: "related" }));
    // A node whose rows the query holds also holds its conditions' witnesses, after its related
    // subqueries; an EXISTS subquery's own conditions are tested in SQL and hold nothing.
    if (kind !== "exists") {
      for (const { subquery, path: at } of nodeWitnesses(ast.where, path))
        related.push({ subquery, path: `${at}.related.`, kind: "witness" as const });
    }
    this.tokens.push(String(related.length));
    for (const { subquery, path: at, kind: sits } of related) {
      this.correlation(ast.table, subquery, at);
      this.query(subquery.subquery, `${at}subquery.`, sits);
    }
  }

  private ordering(ast: QueryAST, table: TableSchema, path: string): [string, "asc" | "desc"][] {
    const ordering: [string, "asc" | "desc"][] = [];
    (ast.orderBy ?? []).forEach(([column, direction], i) => {
      this.column(ast.table, column, `${path}orderBy.${i}`);
      if (!ordering.some(([name]) => name === column)) ordering.push([column, direction]);
    });
    for (const key of table.primaryKey)
      if (!ordering.some(([name]) => name === key)) ordering.push([key, "asc"]);
    return ordering;
  }

  private correlation(parent: string, related: CorrelatedSubquery, path: string): void {
    const { parentField, childField } = related.correlation;
    if (parentField.length !== childField.length) {
      throw refusal(`${path}correlation`, "parentField and childField must name as many columns");
    }
    this.table(related.subquery.table, `${path}subquery.table`);
    this.tokens.push(String(parentField.length));
    parentField.forEach((name, i) => {
      this.tokens.push(this.column(parent, name, `${path}correlation.parentField.${i}`));
    });
    childField.forEach((name, i) => {
      this.tokens.push(this.column(related.subquery.table, name, `${path}correlation.childField.${i}`));
    });
  }

  private condition(table: string, condition: QueryCondition, path: string): void {
    if (condition.type === "and" || condition.type === "or") {
      this.tokens.push(condition.type === "and" ? PLAN_AND : PLAN_OR, String(condition.conditions.length));
      condition.conditions.forEach((child, i) => {
        this.condition(table, child, `${path}.conditions.${i}`);
      });
      return;
    }
    if (condition.type === "correlatedSubquery") {
      this.tokens.push(PLAN_EXISTS, condition.op === "EXISTS" ? "0" : "1");
      this.correlation(table, condition.related, `${path}.related.`);
      this.query(condition.related.subquery, `${path}.related.subquery.`, "exists");
      return;
    }
    const { op, left, right } = condition;
    const isList = op === "IN" || op === "NOT IN";
    if (isList !== Array.isArray(right.value)) {
      throw refusal(`${path}.right`, isList ? `${op} takes a list of values` : `${op} takes a single value`);
    }
    if (left.type === "literal" && Array.isArray(left.value)) {
      throw refusal(`${path}.left`, "a list is only the right side of IN or NOT IN");
    }
    const like = op === "LIKE" || op === "NOT LIKE";
    const pattern = (v: QueryLiteralValue) => (like && typeof v === "string" ? globPattern(v) : v);
    this.tokens.push(
      PLAN_COMPARE,
      SQL_OPERATORS[op] ?? op,
      left.type === "column" ? this.column(table, left.name, `${path}.left.name`) : value(left.value),
      value(pattern(right.value)),
    );
  }
}

/** A value as a plan token: booleans as SQLite stores them, a list as the JSON text json_each reads. */
function value(literal: QueryLiteralValue): string {
  if (literal === null) return PLAN_NULL;
  if (Array.isArray(literal)) {
    return (
      PLAN_VALUE +
      JSON.stringify(JSON.stringify(literal.map((item) => (typeof item === "boolean" ? Number(item) : item))))
    );
  }
  return PLAN_VALUE + JSON.stringify(typeof literal === "boolean" ? Number(literal) : literal);
}

/**
 * A LIKE pattern as a GLOB pattern: `%` and `_` become `*` and `?`, a backslash takes the next
 * character as it is, and GLOB's own special characters are matched literally.
 */
function globPattern(like: string): string {
  let glob = "";
  for (let i = 0; i < like.length; i++) {
    let c = like[i]!;
    if (c === "\\" && i + 1 < like.length) c = `\\${like[++i]}`;
    else if (c === "%") {
      glob += "*";
      continue;
    } else if (c === "_") {
      glob += "?";
      continue;
    }
    const literal = c.length === 2 ? c[1]! : c;
    glob += literal === "*" || literal === "?" || literal === "[" ? `[${literal}]` : literal;
  }
  return glob;
}

function refusal(path: string, message: string): EngineError {
  return new EngineError("bad_request", `${path.replace(/\.$/, "") || "query"}: ${message}`);
}

/** The plan of `ast` over `schema`; a `bad_request` naming the part the schema cannot answer. */
export function queryPlan(schema: Schema, ast: QueryAST): string {
  return writtenPlan(schema, ast).plan;
}

/**
 * The plan of `ast` and the tables it reads, as the engine stores them: ",a,b," (so that a table
 * is found by `instr`). A `bad_request` naming the part the schema cannot answer.
 */
export function writtenPlan(schema: Schema, ast: QueryAST): { plan: string; tables: string } {
  const writer = new PlanWriter(schema);
  writer.query(ast, "", "root");
  return { plan: writer.tokens.join(PLAN_TOKEN_SEPARATOR), tables: `,${writer.tables.join(",")},` };
}
