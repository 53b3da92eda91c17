import * as v from "valibot";
import { MAX_ID_LENGTH } from "./limits.js";

// The subset of Rocicorp Zero's JSON query AST that weir evaluates (see docs/protocol.md,
// "Query ASTs"). An app can build these with Zero's own query builder. Every part outside the
// subset is refused with a message that names it, never ignored: a query that silently meant
// something else would sync the wrong rows.

/** How deep the AST's JSON may nest (a subquery inside a condition takes about five levels). */
export const MAX_QUERY_DEPTH = 64;
/** How many values an `IN` list may hold. */
export const MAX_IN_VALUES = 1_000;
/** How many JSON objects and arrays one AST may hold: bounds the work one AST can ask for. */
export const MAX_QUERY_NODES = 10_000;

const Name = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_ID_LENGTH));

/** A value a literal may hold. */
export type QueryLiteralValue = string | number | boolean | null | readonly (string | number | boolean)[];

const Scalar = v.union([v.string(), v.pipe(v.number(), v.finite()), v.boolean()]);

const Literal = v.strictObject({
  type: v.literal("literal"),
  value: v.union([v.null(), Scalar, v.pipe(v.array(Scalar), v.maxLength(MAX_IN_VALUES))]),
});

const Column = v.strictObject({ type: v.literal("column"), name: Name });

const unsupportedValue = (issue: v.BaseIssue<unknown>) =>
  `a value is a column or a literal, not ${describe(issue.input)} (static parameters are resolved by the server's query function)`;

const LeftValue = v.variant("type", [Column, Literal], unsupportedValue);
const RightValue = v.variant(
  "type",
  [Literal],
  (issue) => `the right side of a comparison is a literal, not ${describe(issue.input)}`,
);

export const SIMPLE_OPERATORS = [
  "=",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "IN",
  "NOT IN",
  "IS",
  "IS NOT",
  "LIKE",
  "NOT LIKE",
  "ILIKE",
  "NOT ILIKE",
] as const;
export type SimpleOperator = (typeof SIMPLE_OPERATORS)[number];

export interface SimpleCondition {
  type: "simple";
  op: SimpleOperator;
  left: { type: "column"; name: string } | { type: "literal"; value: QueryLiteralValue };
  right: { type: "literal"; value: QueryLiteralValue };
}

export interface Correlation {
  parentField: string[];
  childField: string[];
}

export interface CorrelatedSubquery {
  correlation: Correlation;
  subquery: QueryAST;
  system?: "permissions" | "client" | "test";
  hidden?: boolean;
}

export interface CorrelatedSubqueryCondition {
  type: "correlatedSubquery";
  op: "EXISTS" | "NOT EXISTS";
  related: CorrelatedSubquery;
  flip?: boolean;
}

export interface Conjunction {
  type: "and";
  conditions: QueryCondition[];
}

export interface Disjunction {
  type: "or";
  conditions: QueryCondition[];
}

export type QueryCondition = SimpleCondition | Conjunction | Disjunction | CorrelatedSubqueryCondition;

export interface QueryAST {
  table: string;
  alias?: string;
  where?: QueryCondition;
  related?: CorrelatedSubquery[];
  orderBy?: [string, "asc" | "desc"][];
  limit?: number;
  start?: { row: Record<string, string | number | boolean | null>; exclusive: boolean };
}

const Key = v.pipe(v.array(Name), v.minLength(1), v.maxLength(8));

const CorrelatedSubquerySchema: v.GenericSchema<CorrelatedSubquery> = v.strictObject({
  correlation: v.strictObject({ parentField: Key, childField: Key }),
  subquery: v.lazy(() => QueryAST),
  system: v.optional(v.picklist(["permissions", "client", "test"])),
  hidden: v.optional(v.boolean()),
});

const Simple = v.strictObject({
  type: v.literal("simple"),
  op: v.picklist(SIMPLE_OPERATORS, (issue) => `the operator ${describe(issue.input)} is not supported`),
  left: LeftValue,
  right: RightValue,
});

const Subquery = v.strictObject({
  type: v.literal("correlatedSubquery"),
  op: v.picklist(
    ["EXISTS", "NOT EXISTS"],
    (issue) => `a correlated subquery is EXISTS or NOT EXISTS, not ${describe(issue.input)}`,
  ),
  related: CorrelatedSubquerySchema,
  flip: v.optional(v.boolean()),
});

export const QueryCondition: v.GenericSchema<QueryCondition> = v.variant(
  "type",
  [
    Simple,
    v.strictObject({ type: v.literal("and"), conditions: v.array(v.lazy(() => QueryCondition)) }),
    v.strictObject({ type: v.literal("or"), conditions: v.array(v.lazy(() => QueryCondition)) }),
    Subquery,
  ],
  (issue) =>
    `a condition is simple, and, or or correlatedSubquery; ${describe(issue.input)} conditions are not supported`,
);

const StartValue = v.union([v.null(), Scalar]);

/** A query AST of the supported subset of Zero's. */
export const QueryAST: v.GenericSchema<QueryAST> = v.strictObject(
  {
    table: Name,
    alias: v.optional(v.string()),
    where: v.optional(QueryCondition),
    related: v.optional(v.array(CorrelatedSubquerySchema)),
    orderBy: v.optional(v.array(v.tuple([Name, v.picklist(["asc", "desc"], "an ordering is asc or desc")]))),
    limit: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
    start: v.optional(v.strictObject({ row: v.record(Name, StartValue), exclusive: v.boolean() })),
  },
  (issue) => `${describe(issue.input)} is not part of the supported query AST`,
);

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value && typeof value === "object" && "type" in value)
    return JSON.stringify((value as { type: unknown }).type);
  return JSON.stringify(value) ?? String(value);
}

export type QueryASTResult = { ok: true; value: QueryAST } | { ok: false; message: string };

/**
 * Checks that `input` is an AST of the supported subset, within the bounds on depth and size.
 * A refusal names the part: `where.conditions.1.op: the operator "SIMILAR" is not supported`.
 */
export function parseQueryAST(input: unknown): QueryASTResult {
  const bounds = boundsProblem(input);
  if (bounds) return { ok: false, message: bounds };
  const result = v.safeParse(QueryAST, input);
  if (result.success) return { ok: true, value: result.output };
  // The deepest issue names the part most precisely (a union reports its branches' issues).
  let issue = result.issues[0];
  while (issue.issues && issue.issues.length > 0) issue = issue.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join(".");
  return { ok: false, message: path ? `${path}: ${unknownKey(issue) ?? issue.message}` : issue.message };
}

function unknownKey(issue: v.BaseIssue<unknown>): string | null {
  if (issue.kind !== "schema" || issue.expected !== "never") return null;
  const key = issue.path?.[issue.path.length - 1]?.key;
  return `${JSON.stringify(key)} is not part of the supported query AST`;
}

/** Depth and size, checked before validation so that a hostile AST costs little. */
function boundsProblem(input: unknown): string | null {
  let nodes = 0;
  const walk = (value: unknown, depth: number): string | null => {
    if (depth > MAX_QUERY_DEPTH) return `the query AST nests deeper than ${MAX_QUERY_DEPTH} JSON levels`;
    if (value === null || typeof value !== "object") return null;
    if (++nodes > MAX_QUERY_NODES)
      return `the query AST holds more than ${MAX_QUERY_NODES} objects and arrays`;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      const problem = walk(child, depth + 1);
      if (problem) return problem;
    }
    return null;
  };
  return walk(input, 0);
}
