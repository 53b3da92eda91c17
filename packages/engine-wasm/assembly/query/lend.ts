// Groups alike share their hydration. A query evaluated afresh (just added to a group, or on a
// reset) takes its rows from another group that holds the same query (hash and plan), built
// under the same visibility, while the log holds no uncommitted changes. A lender's rows are
// the query's result at the cookie its membership is stored at (the invariant every pull
// keeps, checked by the model test). A lender at the watermark lends them as they are; one
// behind it lends them when none of the changes since its cookie can affect the query (the test
// an incremental pull makes, affected.ts, with the lender's rows), so that groups pulled a
// few writes ago still lend while writes go on. Copying answers what evaluating would, at a
// fraction of the work. A reset of a group whose queries a lender holds all of, and no other,
// copies that group's rows whole, with their counts, when none of its queries is affected.
//
// A group's stored visibility (in _weir_query_groups) is the host's identity of the filters and
// values its rows were all built under; it is NULL when they may mix several (a pull under
// another visibility than its reset's), and such a group lends nothing until it resets. Lenders
// are found among the first LENDER_CANDIDATES groups holding the query's hash, the one with
// the newest membership first, so a hydration never scans every group that holds a popular
// query. A lender's cookie is at or above the floor: the log still holds every change since.
// A group with deferred queries (deferred.ts) holds only a part of its queries' rows: it lends
// none.
//
// Whether the changes since a lender's cookie can affect a query is asked of the changes the
// pull's keys hold, where its visibility filter narrows (change-keys.ts), as a pull asks it of
// its own group's: the lender's rows were built under the same filters and values, so a row no
// state of which since that cookie passes them is in the query's result at neither end.
import { ChangeScope, KeyRead } from "../change-keys";
import { COLUMN_SEPARATOR, execStatement, queryStatement, Statement } from "../host";
import { Schema } from "../schema";
import { firstSeq } from "../state";
import { params, parseI64 } from "../text";
import { Visibility } from "../visibility";
import { affected, touchedTables } from "./affected";
import { noneDeferred } from "./deferred";
import { meteredCall } from "./limits";
import { holdsMoreThan } from "./pending";
import { readPlan } from "./plan";
import { StoredQuery } from "./stored";

const LENDER_CANDIDATES = 32;
/** Query rows past which a metered call copies a twin's rows query by query (see `all`). */
const TWIN_COPY_ROWS: i64 = 16384;

const AT_WATERMARK = " AND g.cookie = ?";
const BEHIND = " AND g.cookie >= ? AND g.cookie < ?";
// The candidate's plan is the group's for the hash: parameters group, hash.
const SAME_PLAN = " AND d.plan = (SELECT plan FROM _weir_queries WHERE group_id = ? AND hash = ?)";

/** Lending's statements and their parts. */
class LendStatements {
  // The first candidates holding the query's hash (d), with their stored state (g) and key (k),
  // that may lend: parameters hash, group, visibility. Then the cookie's condition: at the
  // watermark (one parameter), or behind it (two: the floor and the watermark).
  readonly candidates: string =
    " FROM (SELECT group_id, plan FROM _weir_queries WHERE hash = ? AND group_id <> ? LIMIT " +
    LENDER_CANDIDATES.toString() +
    ") AS d JOIN _weir_query_groups AS g ON g.group_id = d.group_id JOIN _weir_group_keys AS k ON k.group_id = " +
    "d.group_id WHERE g.visibility = ? AND (SELECT tbl = '' FROM _weir_changes ORDER BY seq DESC LIMIT 1)" +
    noneDeferred("d");
  // The candidate holds the group's queries, hash for hash and plan for plan, and no other:
  // parameters the group's count of queries, group.
  readonly sameQueries: string =
    " AND (SELECT count(*) FROM _weir_queries AS l WHERE l.group_id = d.group_id) = ? AND NOT EXISTS (SELECT 1 " +
    "FROM _weir_queries AS q WHERE q.group_id = ? AND NOT EXISTS (SELECT 1 FROM _weir_queries AS l WHERE " +
    "l.group_id = d.group_id AND l.hash = q.hash AND l.plan = q.plan))";
  /** Copies the query's rows from a lender at the watermark. Parameters: key, hash, then candidates', the watermark, SAME_PLAN's. */
  readonly lendAtWatermark: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, r.hash, r.tbl, r.pk FROM _weir_query_rows " +
      "AS r WHERE r.hash = ? AND r.group_key = (SELECT k.group_key" +
      this.candidates +
      AT_WATERMARK +
      SAME_PLAN +
      " LIMIT 1) ON CONFLICT DO NOTHING",
  );
  /** The lender behind the watermark with the newest cookie: its key and cookie. */
  readonly lenderBehind: Statement = new Statement(
    "SELECT k.group_key, g.cookie" + this.candidates + BEHIND + SAME_PLAN + " ORDER BY g.cookie DESC LIMIT 1",
  );
  /** A twin at the watermark: its key. Parameters candidates', the watermark, sameQueries'. */
  readonly twinAtWatermark: Statement = new Statement(
    "SELECT k.group_key" + this.candidates + AT_WATERMARK + this.sameQueries + " LIMIT 1",
  );
  /** The twin behind the watermark with the newest cookie (candidates newest first): its key and cookie. */
  readonly twinBehind: Statement = new Statement(
    "SELECT group_key, cookie FROM (SELECT d.group_id, k.group_key, g.cookie" +
      this.candidates +
      BEHIND +
      " ORDER BY g.cookie DESC) AS d WHERE 1" +
      this.sameQueries +
      " LIMIT 1",
  );
  /** Parameters: key, lender's key, hash. */
  readonly copyRowsOfQuery: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, hash, tbl, pk FROM _weir_query_rows " +
      "WHERE group_key = ? AND hash = ? ON CONFLICT DO NOTHING",
  );
  readonly copyQueryRows: Statement = new Statement(
    "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, hash, tbl, pk FROM _weir_query_rows WHERE group_key = ?",
  );
  readonly copyGroupRows: Statement = new Statement(
    "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT ?, tbl, pk, refs FROM _weir_group_rows WHERE group_key = ?",
  );
}

let builtLendStatements: LendStatements | null = null;

/** The statements and SQL text above, built at first use (never, in a build without the query engine). */
function lendStatements(): LendStatements {
  let built = builtLendStatements;
  if (built == null) builtLendStatements = built = new LendStatements();
  return built;
}

/**
 * Where lent rows come from for one group's pull: `group` (its id), `key` (its key in the rows
 * tables) and `visibility` (the pull's identity; "null": the host gave none, and nothing is lent)
 * are JSON parameters.
 */
export class Lending {
  /** The tables changed since a lender's cookie, by cookie (read once per pull). */
  private touchedSince: Map<i64, Array<string>> = new Map();
  /**
   * Whether the changes since its cookie moved a lender's query, by lender and hash: a reset
   * whose twin behind was refused tries its queries one at a time, often from the same lender.
   */
  private movedQueries: Map<string, bool> = new Map();
  /** The pull's visibility and how it reads each table's changes (keyReads); none: all are read. */
  private visibilityFilters: Visibility = new Visibility();
  private reads: Array<KeyRead | null> = [];

  constructor(
    public schema: Schema,
    public group: string,
    public key: string,
    public watermark: i64,
    public floor: i64,
    public visibility: string,
  ) {}

  /** Reads the changes since a lender's cookie as the pull reads its own (`reads`: keyReads'). */
  readBy(visibility: Visibility, reads: Array<KeyRead | null>): void {
    this.visibilityFilters = visibility;
    this.reads = reads;
  }

  /**
   * Copies the rows of the group's query `hash` (which holds none yet; `plan`: its plan text)
   * from a group that may lend them. Answers the rows copied (0: none was lent, or the result
   * is empty; either way the caller evaluates).
   */
  rows(hash: string, plan: string): i64 {
    if (this.visibility == "null") return 0;
    const watermark = this.watermark.toString();
    const lent = execStatement(
      lendStatements().lendAtWatermark,
      params([this.key, hash, hash, this.group, this.visibility, watermark, this.group, hash]),
    );
    if (lent > 0) return <i64>lent;
    const found = queryStatement(
      lendStatements().lenderBehind,
      params([hash, this.group, this.visibility, this.floor.toString(), watermark, this.group, hash]),
    );
    if (found.length == 0) return 0;
    const lender = found.split(COLUMN_SEPARATOR);
    if (this.moved(lender[0], parseI64(lender[1]), hash, plan)) return 0;
    return <i64>execStatement(lendStatements().copyRowsOfQuery, params([this.key, lender[0], hash]));
  }

  /**
   * Copies every query row and group row of the group (which holds none) from a group holding
   * the same `queries` and no other, when one may lend them. Answers the query rows copied, or
   * -1 when none could.
   */
  all(queries: Array<StoredQuery>): i64 {
    if (this.visibility == "null") return -1;
    const watermark = this.watermark.toString();
    const count = queries.length.toString();
    const first = queries[0].hash;
    let twin = queryStatement(
      lendStatements().twinAtWatermark,
      params([first, this.group, this.visibility, watermark, count, this.group]),
    );
    if (twin.length == 0) {
      const found = queryStatement(
        lendStatements().twinBehind,
        params([first, this.group, this.visibility, this.floor.toString(), watermark, count, this.group]),
      );
      if (found.length == 0) return -1;
      const behind = found.split(COLUMN_SEPARATOR);
      for (let q = 0; q < queries.length; q++) {
        if (this.moved(behind[0], parseI64(behind[1]), queries[q].hash, queries[q].plan)) return -1;
      }
      twin = behind[0];
    }
    // A metered call copies a large group's rows query by query instead, with the answer's time
    // checked between them (deferred.ts): one statement would hold the thread for all of them.
    if (meteredCall() && holdsMoreThan(twin, TWIN_COPY_ROWS, "_weir_query_rows")) return -1;
    const rows = <i64>execStatement(lendStatements().copyQueryRows, params([this.key, twin]));
    execStatement(lendStatements().copyGroupRows, params([this.key, twin]));
    return rows;
  }

  /** Whether the changes since `cookie` can change the rows the lender `lenderKey` holds for the query. */
  private moved(lenderKey: string, cookie: i64, hash: string, plan: string): bool {
    const known = lenderKey + COLUMN_SEPARATOR + hash;
    if (this.movedQueries.has(known)) return this.movedQueries.get(known);
    const scope = new ChangeScope(this.visibilityFilters, this.reads, this.schema.tables, cookie);
    if (!this.touchedSince.has(cookie)) {
      this.touchedSince.set(cookie, touchedTables(cookie, this.watermark, scope));
    }
    const touched = this.touchedSince.get(cookie);
    const moved =
      touched.length > 0 &&
      affected(
        readPlan(plan, this.schema),
        lenderKey,
        hash,
        firstSeq(cookie + 1).toString(),
        firstSeq(this.watermark + 1).toString(),
        touched,
        scope,
      );
    this.movedQueries.set(known, moved);
    return moved;
  }
}
