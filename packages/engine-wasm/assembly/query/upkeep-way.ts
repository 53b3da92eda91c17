// How a query kept up to date among the rows writes can have moved (subtree-upkeep.ts) is brought
// up to date with a pull's changes, by their count and the rows it holds: among those rows, whole,
// or read again in ranges (evaluations.ts, `readAgain`).
import { queryRows } from "../host";
import { literal, params } from "../text";
import { QueryNode, readTables } from "./plan";

/** Changes below which a query is always brought up to date among the rows they can have moved. */
const FEW_CHANGES = 2_048;
/**
 * Changes past which no query is: it would take longer than a step (40,000 tags relabelled took
 * past 50 ms over 120,000 rows). It is read again in ranges instead, each a step.
 */
const MANY_CHANGES = 8_192;
/** Changes and rows counted at most, to choose. */
const COUNTED_AT_MOST = 65_536;

/** How a query is brought up to date after writes (`upkeepWay`). */
export const UPKEEP_ROWS: i32 = 0;
export const UPKEEP_WHOLE: i32 = 1;
export const UPKEEP_AGAIN: i32 = 2;

/**
 * How the group's query (`key`, `hash`: JSON parameters) is brought up to date with the changes in
 * [from, to) (sequence numbers) at the least cost: among the rows they can have moved
 * (UPKEEP_ROWS: their cost is the changes), evaluated whole (UPKEEP_WHOLE: its cost is its rows),
 * or, where both are more than MANY_CHANGES, letting go of its rows to read them again in ranges
 * of the pulls after (UPKEEP_AGAIN: each range a step, so a bulk write cannot have every pull of
 * the group refused past its budget). One issue with its comments is evaluated whole after a bulk
 * write of 50,000 comments; every issue with its comments is read again.
 */
export function upkeepWay(key: string, hash: string, plan: QueryNode, from: i64, to: i64): i32 {
  const tables: string[] = [];
  readTables(plan, tables);
  const names: string[] = [];
  for (let i = 0; i < tables.length; i++) names.push(literal(tables[i]));
  const changes = countUpTo(
    "SELECT 1 FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl IN (" + names.join(", ") + ")",
    [from.toString(), to.toString()],
    COUNTED_AT_MOST,
  );
  if (changes < FEW_CHANGES) return UPKEEP_ROWS;
  const held = countUpTo(
    "SELECT 1 FROM _weir_query_rows WHERE group_key = ? AND hash = ?",
    [key, hash],
    <i32>changes,
  );
  if (held < changes) return held <= MANY_CHANGES ? UPKEEP_WHOLE : UPKEEP_AGAIN;
  return changes <= MANY_CHANGES ? UPKEEP_ROWS : UPKEEP_AGAIN;
}

/** How many rows `rows` (its parameters `bound`) reads, counted up to `most`. */
function countUpTo(rows: string, bound: Array<string>, most: i32): i64 {
  return I64.parseInt(
    queryRows("SELECT count(*) FROM (" + rows + " LIMIT " + most.toString() + ")", params(bound))[0][0],
    10,
  );
}
