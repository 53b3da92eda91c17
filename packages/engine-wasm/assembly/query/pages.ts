// A query's root read in pages. A root whose condition holds an EXISTS can cost a probe per row
// of its table, and one statement would hold the thread for all of them. Where the host pages
// queries (`_weir_pages`, defined with the meter's functions), the root's rows that pass its
// condition and start are found a page of the table at a time, in key order, each page handed
// to the host, which keeps them and may stop the call between pages (it runs the call again
// after other requests had their turn; the pages it kept are not read again while the
// namespace's version stays). The query is then evaluated over the rows the pages kept, with
// its order and limit applied to them all (sql.ts).
import { queryRows } from "../host";
import { keyIn, windowCte, windowKeys, windowLast } from "../keyset-window";
import { params } from "../text";
import { Visibility } from "../visibility";
import { meteredCall } from "./limits";
import { QueryNode } from "./plan";
import { hasExists, QuerySql } from "./sql";
import { keyArray, ordering } from "./sql-terms";

/** What `_weir_pages` answers: the query is not paged, its pages are all read, or the next page. */
const NOT_PAGED = "0";
const PAGED = "1";

/**
 * Reads the pages of `plan`'s root that the host has not kept yet; answers whether the root was
 * paged (then `sql` reads the rows the host kept). `hash` and `planParam` are JSON parameters,
 * `watermark` the namespace's version the pages are read at.
 */
export function readRootPages(
  sql: QuerySql,
  visibility: Visibility,
  plan: QueryNode,
  hash: string,
  planParam: string,
  watermark: i64,
): bool {
  if (!meteredCall() || !hasExists(plan.where)) return false;
  const ask = params([hash, planParam, watermark.toString()]);
  for (;;) {
    const state = queryRows("SELECT _weir_pages(?, ?, ?)", ask)[0][0];
    if (state == NOT_PAGED) return false;
    if (state == PAGED) break;
    // "<size> <after>": the next page's size and the last key read before it (a JSON array, or
    // nothing before the first page).
    const space = state.indexOf(" ");
    const page = new QuerySql(visibility);
    const text = rootPage(
      page,
      plan,
      hash,
      planParam,
      state.substring(space + 1),
      I32.parseInt(state.substring(0, space), 10),
    );
    queryRows(text, params(page.params));
  }
  sql.pagedHash = hash;
  sql.pagedPlan = planParam;
  return true;
}

/**
 * One page of the root's rows: the next `size` rows of its table in key order after
 * the key `after` (a JSON array, "" for the first page), of which those that pass the root's
 * condition and start are handed to the host by `_weir_paged(hash, plan, last, keys)`, with
 * the last key the page read (NULL when it read fewer than `size` rows: the table is done). Under a limit only
 * the page's first rows in the query's order are kept: no other can be among the answer's.
 * `hash` and `plan` are JSON parameters.
 */
function rootPage(
  sql: QuerySql,
  node: QueryNode,
  hash: string,
  plan: string,
  after: string,
  size: i32,
): string {
  const alias = node.alias();
  const table = node.table;
  const window = windowCte(table, after, size, sql.params);
  sql.params.push(hash);
  sql.params.push(plan);
  let text =
    window +
    "SELECT _weir_paged(?, ?, " +
    windowLast(table, size) +
    ", (SELECT json_group_array(json(k)) FROM (SELECT " +
    keyArray(table, alias) +
    " AS k FROM " +
    sql.source(table) +
    " AS " +
    alias +
    " WHERE " +
    keyIn(table, alias, windowKeys(table)) +
    " AND ";
  text += sql.condition(node.where, alias);
  text += " AND " + sql.startCondition(node, alias);
  if (node.limit.length > 0) text += " ORDER BY " + ordering(node, alias) + sql.limitClause(node);
  return text + ")))";
}
