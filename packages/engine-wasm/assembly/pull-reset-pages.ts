// A reset pull read in pages: each table a range of its key at a time, in key order, each page
// handed to the host (`_weir_reset_page`), which keeps its rows and may stop the call between
// pages; it runs the call again after other requests had their turn, and the pages it kept are
// not read again. Pages read in different runs see different versions, so the run that has read
// them all answers them caught up: after them, every row changed since the version the first page
// was read at (`since`), as an incremental pull from that cookie would answer it. A row a page
// read before such a change is put again as it is now, or deleted; a row no change touched is as
// its page read it. The host starts over should the change log no longer reach back to `since`.
import { ROWS_AFTER_OP_HERE } from "../src/abi";
import { KeyRead } from "./change-keys";
import { queryJoinedPayloads, queryRows } from "./host";
import { keyBound, pageEnd } from "./keyset-window";
import { putOp } from "./projection";
import { changesSql } from "./pull-changes";
import { PullPlan } from "./pull-plan";
import { Schema } from "./schema";
import { ident, jsonString, params, parseI64 } from "./text";
import { Visibility } from "./visibility";

/** What `_weir_reset_pages` answers when the host does not page this reset. */
const NOT_PAGED = "0";
/** Its answer once every page is read: "done <since> <rows kept>". */
const DONE = "done ";

/**
 * Plans the reset from pages, reading those the host has not kept yet; false when the host does
 * not page it (then `planReset` reads it in one statement).
 */
export function planPagedReset(
  schema: Schema,
  visibility: Visibility,
  reads: Array<KeyRead | null>,
  format: i32,
  watermark: i64,
  floor: i64,
  plan: PullPlan,
): bool {
  const ask = params([watermark.toString(), floor.toString(), schema.tables.length.toString()]);
  let state: string;
  for (;;) {
    state = queryRows("SELECT _weir_reset_pages(?, ?, ?)", ask)[0][0];
    if (state == NOT_PAGED) return false;
    if (state.startsWith(DONE)) break;
    // "<table> <size> <after>": the next page's table (its index), size, and the last key read
    // before it (a JSON array, or nothing before the table's first page).
    const first = state.indexOf(" ");
    const second = state.indexOf(" ", first + 1);
    resetPage(
      schema,
      visibility,
      format,
      I32.parseInt(state.substring(0, first), 10),
      I32.parseInt(state.substring(first + 1, second), 10),
      state.substring(second + 1),
    );
  }
  const rest = state.substring(DONE.length);
  const space = rest.indexOf(" ");
  const since = parseI64(rest.substring(0, space));
  let included = parseI64(rest.substring(space + 1));
  if (since < watermark && schema.tables.length > 0) {
    // The rows changed since the first page, after the pages (the host joins them in that order).
    const bound: string[] = [];
    const changed = changesSql(schema, visibility, reads, format, since, watermark, bound);
    included += queryJoinedPayloads(
      "SELECT count(*), coalesce(group_concat(patch, ','), ''), total(substr(patch, 8, 1) = 'd') FROM (" +
        changed +
        ")",
      params(bound),
    );
  }
  plan.reset = true;
  plan.cookie = watermark;
  plan.included = included;
  plan.patch = '{"op":"clear"}' + ROWS_AFTER_OP_HERE;
  return true;
}

/**
 * One page: the rows of table `index` whose keys are the next `size` after `after`, those the
 * caller may see rendered as puts and handed to the host with the page's last key
 * (`_weir_reset_page(last, count, rows)`; NULL when the table is done). The page's end is found
 * first, so the page itself is one range of the table's key (its storage order).
 */
function resetPage(
  schema: Schema,
  visibility: Visibility,
  format: i32,
  index: i32,
  size: i32,
  after: string,
): void {
  const table = schema.tables[index];
  const bound: string[] = [];
  const ends = queryRows(pageEnd(table, after, size, bound), params(bound));
  const last = ends.length == 0 ? "" : ends[0][0];
  const filter = visibility.filterFor(table.name);
  bound.length = 0;
  bound.push(last.length == 0 ? "null" : jsonString(last));
  let range = keyBound(table, after, bound);
  if (last.length > 0) range += " AND " + keyBound(table, last, bound, true);
  filter.addParams(bound);
  queryRows(
    "SELECT _weir_reset_page(?, count(*), group_concat(patch, ',')) FROM (SELECT " +
      putOp(table, format) +
      " AS patch FROM " +
      ident(table.name) +
      " WHERE " +
      range +
      " AND " +
      filter.condition() +
      ")",
    params(bound),
  );
}
