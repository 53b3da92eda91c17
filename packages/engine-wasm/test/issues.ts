import type { QueryAST, QueryCondition } from "@weir/protocol";
import type { Schema } from "../src/types.js";

/**
 * An issue tracker for the tests of EXISTS conditions: issues carry labels through a junction
 * table (as Zero's many-to-many relationships do), a label has a kind, and issues belong to
 * projects whose members may see them.
 */
export const issueSchema = {
  tables: {
    issue: { columns: { id: "string", projectId: "string", title: "string" }, primaryKey: ["id"] },
    issueLabel: { columns: { issueId: "string", labelId: "string" }, primaryKey: ["issueId", "labelId"] },
    label: { columns: { id: "string", name: "string", kindId: "string" }, primaryKey: ["id"] },
    kind: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
    comment: { columns: { id: "string", issueId: "string", authorId: "string" }, primaryKey: ["id"] },
    member: { columns: { projectId: "string", userId: "string" }, primaryKey: ["projectId", "userId"] },
  },
} satisfies Schema;

const equals = (name: string, value: string): QueryCondition => ({
  type: "simple",
  op: "=",
  left: { type: "column", name },
  right: { type: "literal", value },
});

const exists = (
  parentField: string,
  childField: string,
  subquery: QueryAST,
  alias = `zsubq_${subquery.table}`,
): QueryCondition => ({
  type: "correlatedSubquery",
  op: "EXISTS",
  related: {
    system: "client",
    correlation: { parentField: [parentField], childField: [childField] },
    subquery: { ...subquery, alias },
  },
});

/** Through the junction, as Zero's builder writes `whereExists('labels', ...)`. */
const withLabel = (where: QueryCondition): QueryCondition =>
  exists(
    "id",
    "issueId",
    { table: "issueLabel", where: exists("labelId", "id", { table: "label", where }) },
    "zsubq_labels",
  );

/** `zql.issue.whereExists('labels', q => q.where('name', name))`. */
export function issuesLabelled(name: string): QueryAST {
  return { table: "issue", where: withLabel(equals("name", name)), orderBy: [["id", "asc"]] };
}

/** `zql.issue.whereExists('labels', q => q.whereExists('kind', k => k.where('name', name)))`. */
export function issuesWithLabelOfKind(name: string): QueryAST {
  const ofKind = exists("kindId", "id", { table: "kind", where: equals("name", name) });
  return { table: "issue", where: withLabel(ofKind), orderBy: [["id", "asc"]] };
}

/** Issues a comment of `authorId`'s is on (an EXISTS correlated by the issue's key). */
export function issuesCommentedBy(authorId: string): QueryAST {
  return {
    table: "issue",
    where: exists("id", "issueId", { table: "comment", where: equals("authorId", authorId) }),
  };
}

/** Issues of the projects `userID` is a member of: the permission-shaped query. */
export function issuesOfMember(userID: string): QueryAST {
  return {
    table: "issue",
    where: exists("projectId", "projectId", { table: "member", where: equals("userId", userID) }),
  };
}

/** The rows a client holds, by table, as it would evaluate a query over them. */
export type LocalRows = Map<string, Record<string, unknown>[]>;

/**
 * The keys of the root rows `ast` answers over `rows` alone, as a client that evaluates queries
 * over its own copy does (Zero's): an EXISTS finds a row only if the client holds one. Enough of
 * the AST for these tests: `=` and `!=`, `and`, `or`, EXISTS and NOT EXISTS, no limit.
 */
export function localView(ast: QueryAST, rows: LocalRows): string[] {
  const holds = (table: string, row: Record<string, unknown>, condition: QueryCondition): boolean => {
    switch (condition.type) {
      case "and":
        return condition.conditions.every((c) => holds(table, row, c));
      case "or":
        return condition.conditions.some((c) => holds(table, row, c));
      case "simple": {
        if (condition.left.type !== "column") throw new Error("a literal on the left");
        const value = row[condition.left.name];
        if (condition.op === "=") return value === condition.right.value;
        if (condition.op === "!=") return value !== condition.right.value;
        throw new Error(`the operator ${condition.op}`);
      }
      case "correlatedSubquery": {
        const { correlation, subquery } = condition.related;
        const found = (rows.get(subquery.table) ?? []).some(
          (child) =>
            correlation.parentField.every((field, i) => child[correlation.childField[i]!] === row[field]) &&
            (!subquery.where || holds(subquery.table, child, subquery.where)),
        );
        return condition.op === "EXISTS" ? found : !found;
      }
    }
  };
  return (rows.get(ast.table) ?? [])
    .filter((row) => !ast.where || holds(ast.table, row, ast.where))
    .map((row) => `${ast.table}/${JSON.stringify([row.id])}`)
    .sort();
}
