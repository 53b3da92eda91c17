// A query-aware pull: the group's rows are those its active queries hold. The pull applies the
// group's query patch, re-evaluates the queries the changes since its cookie can affect (see
// query-affected.ts), and answers the rows whose membership moved, and the
// rows still held that changed since the cookie, with their current values. A client whose
// membership is not at its cookie (a null cookie, one below the floor, one the group's stored
// membership was not answered at) gets `clear` and every row its queries hold.
import {
  COLUMN_SEPARATOR,
  NULL_COOKIE,
  QUERY_OP_CLEAR,
  QUERY_OP_DEL,
  QUERY_OP_VERSION,
  ROW_SEPARATOR,
} from "../src/abi";
import { exec, queryJoinedPayloads, queryPayload, queryRows } from "./host";
import { delOp, keyMatch, putOp } from "./projection";
import { affected } from "./query-affected";
import { Membership, planTables } from "./query-membership";
import { readPlan } from "./query-plan";
import { Schema, Table } from "./schema";
import { firstSeq } from "./state";
import { extraParam, ident, jsonString, literal, params, unionAll } from "./text";
import { Visibility } from "./visibility";

export class QueryAnswer {
  reset: bool = false;
  included: i64 = 0;
  patch: string = "";
  gotQueries: string = "[]";
  evaluated: i64 = 0;
  recomputed: i64 = 0;
  /** The evaluations passed the pull's budget of rows: the pull is refused (and rolled back). */
  exceeded: bool = false;
}

class StoredQuery {
  constructor(
    public hash: string,
    public plan: string,
    public tables: string,
  ) {}
}

function storedQueries(group: string): Array<StoredQuery> {
  const rows = queryRows(
    "SELECT json_quote(hash), plan, tables FROM _weir_queries WHERE group_id = ? ORDER BY hash",
    params([group]),
  );
  const queries: StoredQuery[] = [];
  for (let i = 0; i < rows.length; i++) queries.push(new StoredQuery(rows[i][0], rows[i][1], rows[i][2]));
  return queries;
}

function applyPatch(membership: Membership, group: string, patchText: string, evaluate: bool): void {
  if (patchText.length == 0) return;
  const lines = patchText.split(ROW_SEPARATOR);
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i].split(COLUMN_SEPARATOR);
    if (fields[0] == QUERY_OP_VERSION) continue;
    if (fields[0] == QUERY_OP_CLEAR) {
      const queries = storedQueries(group);
      for (let q = 0; q < queries.length; q++) membership.release(queries[q].hash);
      exec("DELETE FROM _weir_queries WHERE group_id = ?", params([group]));
      continue;
    }
    const hash = extraParam(I32.parseInt(fields[1], 10));
    if (fields[0] == QUERY_OP_DEL) {
      membership.release(hash);
      exec("DELETE FROM _weir_queries WHERE group_id = ? AND hash = ?", params([group, hash]));
      continue;
    }
    const known = queryRows(
      "SELECT 1 FROM _weir_queries WHERE group_id = ? AND hash = ?",
      params([group, hash]),
    );
    if (known.length > 0) continue;
    const plan = fields[4];
    const tables = planTables(readPlan(plan, membership.schema));
    exec(
      "INSERT INTO _weir_queries (group_id, hash, name, args, plan, tables) VALUES (?, ?, ?, ?, ?, ?)",
      params([
        group,
        hash,
        extraParam(I32.parseInt(fields[2], 10)),
        extraParam(I32.parseInt(fields[3], 10)),
        jsonString(plan),
        jsonString(tables),
      ]),
    );
    if (evaluate && !membership.exceeded()) membership.evaluate(hash, plan, true);
  }
}

/** The tables the changes in (cookie, watermark] touched. */
function touchedTables(cookie: i64, watermark: i64): Array<string> {
  const rows = queryRows(
    "SELECT DISTINCT tbl FROM _weir_changes WHERE seq >= ? AND seq < ? AND tbl <> ''",
    params([firstSeq(cookie + 1).toString(), firstSeq(watermark + 1).toString()]),
  );
  const names: string[] = [];
  for (let i = 0; i < rows.length; i++) names.push(rows[i][0]);
  return names;
}

function readsAny(query: StoredQuery, tables: Array<string>): bool {
  for (let i = 0; i < tables.length; i++) {
    if (query.tables.includes("," + tables[i] + ",")) return true;
  }
  return false;
}

const HELD = " AND EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_id = ? AND g.tbl = ";

/** The put of each live row of `table` whose key is in `keys` (a query answering `_weir_k`). */
function puts(table: Table, format: i32, keys: string): string {
  return (
    "SELECT (SELECT " +
    putOp(table, format) +
    " FROM " +
    ident(table.name) +
    " WHERE " +
    keyMatch(table, "_weir_k") +
    ") AS patch FROM (" +
    keys +
    ")"
  );
}

function answerSql(
  schema: Schema,
  format: i32,
  group: string,
  full: bool,
  cookie: i64,
  watermark: i64,
  bound: Array<string>,
): string {
  const parts: string[] = [];
  for (let i = 0; i < schema.tables.length; i++) {
    const table = schema.tables[i];
    const name = literal(table.name);
    if (full) {
      parts.push(
        puts(
          table,
          format,
          "SELECT pk AS _weir_k FROM _weir_group_rows WHERE group_id = ? AND tbl = " + name,
        ),
      );
      bound.push(group);
      continue;
    }
    // Deleted: held before the pull and by no query now.
    parts.push(
      "SELECT " +
        delOp(table, format, "_weir_k") +
        " AS patch FROM (SELECT d.pk AS _weir_k FROM _weir_query_scratch AS d WHERE d.kind = 1 AND d.was_held = 1 " +
        "AND d.tbl = " +
        name +
        " AND NOT EXISTS (SELECT 1 FROM _weir_group_rows AS g WHERE g.group_id = ? AND g.tbl = d.tbl AND g.pk = d.pk))",
    );
    bound.push(group);
    // Put: held now and either not held before or changed since the cookie.
    parts.push(
      puts(
        table,
        format,
        "SELECT d.pk AS _weir_k FROM _weir_query_scratch AS d WHERE d.kind = 1 AND d.was_held = 0 AND d.tbl = " +
          name +
          HELD +
          "d.tbl AND g.pk = d.pk) UNION SELECT c.pk FROM _weir_changes AS c WHERE c.seq >= ? AND c.seq < ? " +
          "AND c.tbl = " +
          name +
          HELD +
          "c.tbl AND g.pk = c.pk)",
      ),
    );
    bound.push(group);
    bound.push(firstSeq(cookie + 1).toString());
    bound.push(firstSeq(watermark + 1).toString());
    bound.push(group);
  }
  return "SELECT 0, patch FROM (" + unionAll(parts) + ") WHERE patch IS NOT NULL";
}

/**
 * Runs the query side of a pull for `groupID`; `storedCookie` is the cookie its membership is
 * at (-2: none).
 * Leaves the rows to send with the host (queryPayload) and answers what the body needs.
 */
export function queryPull(
  schema: Schema,
  groupID: string,
  cookie: i64,
  watermark: i64,
  floor: i64,
  storedCookie: i64,
  format: i32,
  visibility: Visibility,
  patchText: string,
  maxQueryRows: i64,
): QueryAnswer {
  const group = jsonString(groupID);
  const answer = new QueryAnswer();
  const membership = new Membership(schema, visibility, group);
  membership.budget = maxQueryRows;
  const full = cookie == NULL_COOKIE || cookie < floor || storedCookie != cookie;
  if (full) {
    // Every held row is answered: the group's rows are built anew from its queries.
    membership.full = true;
    membership.clearRows();
    applyPatch(membership, group, patchText, false);
    const queries = storedQueries(group);
    for (let q = 0; q < queries.length && !membership.exceeded(); q++) {
      membership.evaluate(queries[q].hash, queries[q].plan, true);
      answer.recomputed++;
    }
  } else {
    if (cookie < watermark) {
      const touched = touchedTables(cookie, watermark);
      const from = firstSeq(cookie + 1).toString();
      const to = firstSeq(watermark + 1).toString();
      const queries = storedQueries(group);
      for (let q = 0; q < queries.length && !membership.exceeded(); q++) {
        const query = queries[q];
        if (!readsAny(query, touched)) continue;
        if (!affected(readPlan(query.plan, schema), group, query.hash, from, to, touched)) continue;
        membership.evaluate(query.hash, query.plan);
        answer.recomputed++;
      }
    }
    applyPatch(membership, group, patchText, true);
    membership.settle();
  }
  if (membership.evaluated > maxQueryRows) {
    answer.exceeded = true;
    return answer;
  }
  const bound: string[] = [];
  const sql = answerSql(schema, format, group, full, cookie, watermark, bound);
  if (full) {
    // Every row of a reset is a put: SQLite joins them into one string, as a plain reset's.
    answer.included = queryJoinedPayloads(
      "SELECT count(*), group_concat(patch, ',') FROM (" + sql + ")",
      params(bound),
    );
  } else {
    const text = queryPayload(sql, params(bound));
    answer.included = text.length == 0 ? 0 : text.split(ROW_SEPARATOR).length;
  }
  answer.reset = full;
  answer.evaluated = membership.evaluated;
  answer.gotQueries = queryRows(
    "SELECT json_group_array(hash) FROM (SELECT hash FROM _weir_queries WHERE group_id = ? ORDER BY hash)",
    params([group]),
  )[0][0];
  exec("DELETE FROM _weir_query_scratch");
  exec(
    "INSERT INTO _weir_query_groups (group_id, cookie) VALUES (?, ?) ON CONFLICT (group_id) DO UPDATE SET cookie = excluded.cookie",
    params([group, watermark.toString()]),
  );
  const version = transformVersion(patchText);
  if (version.length > 0) {
    exec("UPDATE _weir_query_groups SET transform_version = ? WHERE group_id = ?", params([version, group]));
  }
  return answer;
}

/** The patch's "version\t<extra>" line, as a parameter ("" when it has none). */
function transformVersion(patchText: string): string {
  if (!patchText.startsWith(QUERY_OP_VERSION + COLUMN_SEPARATOR)) return "";
  const end = patchText.indexOf(ROW_SEPARATOR);
  const field = patchText.substring(QUERY_OP_VERSION.length + 1, end < 0 ? patchText.length : end);
  return extraParam(I32.parseInt(field, 10));
}

/** The group's stored queries and transform version, as JSON: {"version":..,"queries":[{hash,name,args}]}. */
export function groupQueries(groupID: string): string {
  return queryRows(
    "SELECT json_object('version', (SELECT transform_version FROM _weir_query_groups WHERE group_id = ?), " +
      "'queries', (SELECT json_group_array(json_object('hash', hash, 'name', name, 'args', json(args))) " +
      "FROM _weir_queries WHERE group_id = ?))",
    params([jsonString(groupID), jsonString(groupID)]),
  )[0][0];
}
