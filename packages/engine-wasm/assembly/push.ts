// Push: deciding whether mutations run, and recording that they ran.
import { COLUMN_SEPARATOR, execStatement, queryStatement, ROW_SEPARATOR, Statement } from "./host";
import { COMMIT_MARKER, PENDING_VERSION } from "./state";
import { jsonString, parseI64, stringsParams } from "./text";

// A batch travels as the caller's first extra parameter: a JSON array of [clientID, id].
const BATCH = '{"$":0}';

const LAST_MUTATION_IDS = new Statement(
  "SELECT json_quote(json_extract(m.value, '$[0]')), json_extract(m.value, '$[1]'), " +
    "coalesce(c.last_mutation_id, 0) FROM json_each(?) AS m LEFT JOIN _weir_clients AS c " +
    "ON c.group_id = ? AND c.id = json_extract(m.value, '$[0]') ORDER BY m.key",
);
const RECORD_PROCESSED = new Statement(
  "INSERT INTO _weir_clients (group_id, id, last_mutation_id, version) " +
    "SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), " +
    PENDING_VERSION +
    " FROM json_each(?) WHERE true " +
    "ON CONFLICT (group_id, id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version",
);
const COMMIT = new Statement(COMMIT_MARKER);
const LAST_MUTATION_ID = new Statement(
  "SELECT last_mutation_id FROM _weir_clients WHERE group_id = ? AND id = ?",
);
const RECORD_ONE = new Statement(
  "INSERT INTO _weir_clients (group_id, id, last_mutation_id, version) VALUES (?, ?, ?, " +
    PENDING_VERSION +
    ") " +
    "ON CONFLICT (group_id, id) DO UPDATE SET last_mutation_id = excluded.last_mutation_id, version = excluded.version",
);

function status(id: i64, next: i64): string {
  if (id < next) return PREFLIGHT_REPLAY;
  if (id > next) return PREFLIGHT_OUT_OF_ORDER;
  return PREFLIGHT_APPLY;
}

/** The preflight of a single mutation: "<status>\t<the client's last id>". */
export function preflightOne(groupID: string, clientID: string, id: i64): string {
  const last = parseI64(queryStatement(LAST_MUTATION_ID, stringsParams(groupID, clientID)));
  return status(id, last + 1) + COLUMN_SEPARATOR + last.toString();
}

/** Records a single processed mutation and commits its version. */
export function finalizeOne(groupID: string, clientID: string, id: i64): void {
  execStatement(RECORD_ONE, stringsParams(groupID, clientID, id));
  execStatement(COMMIT);
}

export const PREFLIGHT_APPLY = "apply";
export const PREFLIGHT_REPLAY = "replay";
export const PREFLIGHT_OUT_OF_ORDER = "ooo";

/**
 * For each mutation of a batch, in order: whether it is next ("apply"), already done
 * ("replay") or skips ahead ("ooo"), as if every mutation found next were then processed
 * (applied, or refused by its mutator: either way its id advances). Returns one line
 * "<status>\t<the client's last id before it>" per mutation.
 */
export function preflight(groupID: string): string {
  const rows = queryStatement(LAST_MUTATION_IDS, "[" + BATCH + "," + jsonString(groupID) + "]");
  const expected = new Map<string, i64>();
  const lines: string[] = [];
  let position = 0;
  while (position < rows.length) {
    let end = rows.indexOf(ROW_SEPARATOR, position);
    if (end < 0) end = rows.length;
    const first = rows.indexOf(COLUMN_SEPARATOR, position);
    const second = rows.indexOf(COLUMN_SEPARATOR, first + 1);
    const client = rows.substring(position, first);
    const id = parseI64(rows.substring(first + 1, second));
    const next = expected.has(client) ? expected.get(client) : parseI64(rows.substring(second + 1, end)) + 1;
    const found = status(id, next);
    expected.set(client, found == PREFLIGHT_APPLY ? next + 1 : next);
    lines.push(found + COLUMN_SEPARATOR + (next - 1).toString());
    position = end + 1;
  }
  return lines.join(ROW_SEPARATOR);
}

/**
 * Records the last processed mutation id of each client in the batch, in the caller's
 * transaction, and commits the version: the mutations' writes and their ids become one new
 * version together, or (rolled back) neither does.
 */
export function finalize(groupID: string): void {
  execStatement(RECORD_PROCESSED, "[" + jsonString(groupID) + "," + BATCH + "]");
  execStatement(COMMIT);
}
