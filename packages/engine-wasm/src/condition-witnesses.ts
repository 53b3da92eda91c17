import type { CorrelatedSubquery, QueryAST, QueryCondition } from "@weir/protocol";

/**
 * How many rows of an EXISTS subquery a query holds per row of the node its condition tests, as
 * Zero's query builder joins them (3, and 1 for a condition a permission rule wrote).
 */
const WITNESS_LIMIT = 3;
const PERMISSIONS_WITNESS_LIMIT = 1;

/** An EXISTS (or NOT EXISTS) condition of a node's `where`, with where it sits in the AST. */
interface ConditionSubquery {
  related: CorrelatedSubquery;
  /** The condition's path, as a refusal names it (`where.conditions.1`). */
  path: string;
}

/**
 * The subqueries of a node's conditions, at any depth of its `and`s and `or`s (not inside another
 * subquery: those are the subquery's own), in the order they appear.
 */
function conditionSubqueries(where: QueryCondition | undefined, path: string): ConditionSubquery[] {
  const found: ConditionSubquery[] = [];
  const visit = (condition: QueryCondition, at: string) => {
    if (condition.type === "correlatedSubquery") found.push({ related: condition.related, path: at });
    else if (condition.type === "and" || condition.type === "or")
      condition.conditions.forEach((child, i) => {
        visit(child, `${at}.conditions.${i}`);
      });
  };
  if (where) visit(where, `${path}where`);
  return found;
}

/**
 * A condition's subquery as the related subquery that holds its witnesses: for each row of the
 * node the condition tests, the first few subquery rows (in the subquery's order) that
 * correlate with it and pass the subquery's own conditions. A client that evaluates the query
 * over its own copy of the rows (Zero's does) then finds a row wherever the server found one, and
 * none where it found none; without them every EXISTS would read false there. A subquery whose
 * limit is 0 matches nothing and holds nothing.
 */
function witnessSubquery(related: CorrelatedSubquery): CorrelatedSubquery | undefined {
  if (related.subquery.limit === 0) return undefined;
  const limit = related.system === "permissions" ? PERMISSIONS_WITNESS_LIMIT : WITNESS_LIMIT;
  const subquery: QueryAST = { ...related.subquery, limit };
  return { correlation: related.correlation, subquery, hidden: true };
}

/**
 * The witnesses a node holds for its conditions, each once: conditions alike (the same
 * correlation and subquery, whatever their aliases) hold the same rows, so one of them does.
 */
export function nodeWitnesses(
  where: QueryCondition | undefined,
  path: string,
): { subquery: CorrelatedSubquery; path: string }[] {
  const seen = new Set<string>();
  const witnesses: { subquery: CorrelatedSubquery; path: string }[] = [];
  for (const { related, path: at } of conditionSubqueries(where, path)) {
    const witness = witnessSubquery(related);
    if (!witness) continue;
    const identity = JSON.stringify(witness, (key, value) => (key === "alias" ? undefined : value));
    if (seen.has(identity)) continue;
    seen.add(identity);
    witnesses.push({ subquery: witness, path: at });
  }
  return witnesses;
}
