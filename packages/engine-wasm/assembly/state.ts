// The engine's bookkeeping, under the reserved `_weir_` prefix.
import { exec, queryRows } from "./host";
import { parseI64 } from "./text";

// The newest log row tells the pending version (the version the open transaction's changes
// belong to): one past a marker, or the version of a change already pending. Each figure is a
// scalar subquery of its own: a step down the rowid's b-tree, cheaper than a derived table.
const NEWEST = " FROM _weir_changes ORDER BY seq DESC LIMIT 1)";
export const PENDING_VERSION = "(SELECT version + (tbl = '')" + NEWEST;
/** The seq the next log row takes (see the log's CREATE TABLE below). */
export const NEXT_SEQ = "(SELECT max(seq + 1, (version + (tbl = '')) * 16777216)" + NEWEST;
const LOG_COLUMNS = "INSERT INTO _weir_changes (seq, version, tbl, pk, existed) ";

/**
 * An INSERT that appends a log row at the pending version; `values` names the `tbl, pk, old`
 * to store. A VALUES row, not INSERT ... SELECT: SQLite copies a SELECT that reads the table it
 * inserts into through a temporary table first, which costs a change-capture trigger double.
 */
export function appendToLog(values: string): string {
  return LOG_COLUMNS + "VALUES (" + NEXT_SEQ + ", " + PENDING_VERSION + ", " + values + ")";
}

/** `appendToLog`, only when `condition` holds. */
export function appendToLogWhen(values: string, condition: string): string {
  return LOG_COLUMNS + "SELECT " + NEXT_SEQ + ", " + PENDING_VERSION + ", " + values + " WHERE " + condition;
}

/** The committed watermark: the version of the newest marker. */
export const WATERMARK = "(SELECT version - (tbl <> '')" + NEWEST;

// A push's commit marker also holds the record of the client it finalized: `pk` is the
// client's key, json_array(group, id), and `existed` its last mutation id, which moved in the
// marker's version ('[]' and NULL in every other marker). So a run of pushes writes two b-trees
// (the app's and the log) and not a third: a client's record is the newest marker's (the head's)
// when it names the client, else its `_weir_clients` row, which is written only when another
// commit takes the head over. Retention never deletes the newest marker.
/** The head: the newest commit marker (the last row at or below the watermark). */
const HEAD =
  "(SELECT pk, existed, version FROM _weir_changes WHERE seq < " +
  WATERMARK +
  " * 16777216 + 16777216 ORDER BY seq DESC LIMIT 1)";
/** The key of the client whose group and id are the parameters, as a push's marker holds it. */
const CLIENT_KEY = "json_array(?, ?)";

/**
 * The last mutation id of the client whose group and id are the parameters: the head's when it
 * names the client, else the client's row.
 */
export const LAST_MUTATION_ID_SQL =
  "SELECT coalesce(h.existed, (SELECT last_mutation_id FROM _weir_clients WHERE group_id = k.g AND id = k.i)) " +
  "FROM (SELECT ? AS g, ? AS i) AS k LEFT JOIN " +
  HEAD +
  " AS h ON h.pk = json_array(k.g, k.i)";

/** Every client's record (group_id, id, last_mutation_id, version), as a table expression. */
export const CLIENTS =
  "(SELECT group_id, id, last_mutation_id, version FROM _weir_clients AS c WHERE NOT EXISTS " +
  "(SELECT 1 FROM " +
  HEAD +
  " WHERE pk = json_array(c.group_id, c.id)) UNION ALL SELECT json_extract(pk, '$[0]'), " +
  "json_extract(pk, '$[1]'), existed, version FROM " +
  HEAD +
  " WHERE pk <> '[]')";

const FLUSH =
  "INSERT INTO _weir_clients (group_id, id, last_mutation_id, version) SELECT json_extract(pk, '$[0]'), " +
  "json_extract(pk, '$[1]'), existed, version FROM " +
  HEAD +
  " WHERE pk <> '[]'";
const FLUSH_UPDATE =
  " ON CONFLICT (group_id, id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version";

/**
 * Writes the head's record to `_weir_clients` unless it is the record of the client whose group
 * and id are the parameters: run before a push's marker takes the head over.
 */
export const FLUSH_HEAD = FLUSH + " AND pk <> " + CLIENT_KEY + FLUSH_UPDATE;

/**
 * Commits the pending version as a push's: the new marker is the head and holds the record of
 * the client whose group, id and last mutation id are the parameters.
 */
export const COMMIT_CLIENT_MARKER = appendToLog("'', " + CLIENT_KEY + ", CAST(? AS INTEGER)");

const COMMIT_MARKER = appendToLog("'', '[]', NULL");

/** Commits the pending version: the changes before it become visible to pulls. */
export function commitVersion(): void {
  exec(FLUSH + FLUSH_UPDATE);
  exec(COMMIT_MARKER);
}

export const BOOKKEEPING_SQL: Array<string> = [
  // The floor (the oldest version the log still answers from), the engine version and the
  // installed schema. Written only when they change, never per commit.
  "CREATE TABLE IF NOT EXISTS _weir_state (id INTEGER PRIMARY KEY CHECK (id = 1), " +
    "floor INTEGER NOT NULL, engine_version TEXT NOT NULL, schema TEXT NOT NULL)",
  // The change log. A row per captured row change: `existed` is 1 when the row existed before
  // the change (its values then are in the table's prior-state table, `_weir_prior_<table>`,
  // under the same seq) and NULL when it did not, so that a pull can tell whether a client could
  // hold the row. A commit appends a marker (`tbl` = ''), so the log's newest row tells the
  // watermark, and committing writes no other page. The rowid `seq` starts with the version
  // (version * 2^24 + n), so "changes after version v" is a rowid range and the log needs no
  // index. The newest marker is never pruned.
  "CREATE TABLE IF NOT EXISTS _weir_changes (seq INTEGER PRIMARY KEY, version INTEGER NOT NULL, " +
    "tbl TEXT NOT NULL, pk TEXT NOT NULL, existed INTEGER, " +
    "CHECK (seq >= version * 16777216 AND seq < (version + 1) * 16777216))",
  // Each client group, its owner, and the visibility (the host's identity of the filters and their
  // values) its last pull was answered under: a pull under another one recomputes the group's rows.
  "CREATE TABLE IF NOT EXISTS _weir_client_groups (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, visibility TEXT) " +
    "WITHOUT ROWID",
  // A client is known within its group: the same id in another group is another client. The
  // head's client may have an older row here (see HEAD above): read clients through CLIENTS.
  "CREATE TABLE IF NOT EXISTS _weir_clients (group_id TEXT NOT NULL, id TEXT NOT NULL, " +
    "last_mutation_id INTEGER NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (group_id, id)) WITHOUT ROWID",
];

/** Changes of one version: their seq is version * CHANGES_PER_VERSION + n. */
export const CHANGES_PER_VERSION: i64 = 16777216;

/** The first seq a change of `version` can have. */
export function firstSeq(version: i64): i64 {
  return version * CHANGES_PER_VERSION;
}

export class Versions {
  constructor(
    public watermark: i64,
    public floor: i64,
  ) {}
}

export function readVersions(): Versions {
  const rows = queryRows("SELECT " + WATERMARK + ", floor FROM _weir_state WHERE id = 1");
  return new Versions(parseI64(rows[0][0]), parseI64(rows[0][1]));
}

/** Commits a new version above every cookie handed out, and makes it the floor: every client resets once. */
export function raiseFloorToWatermark(): void {
  commitVersion();
  exec("UPDATE _weir_state SET floor = " + WATERMARK + " WHERE id = 1");
}

/** Commits the pending version if changes are pending. Answers "<watermark>\t<committed 1|0>". */
export function commitPending(): string {
  const pending = queryRows("SELECT (SELECT tbl <> ''" + NEWEST)[0][0] == "1";
  if (pending) commitVersion();
  return queryRows("SELECT " + WATERMARK)[0][0] + "\t" + (pending ? "1" : "0");
}
