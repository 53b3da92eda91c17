// Push: deciding whether mutations run, and recording that they ran.
import {
  COLUMN_SEPARATOR,
  PREFLIGHT_APPLY,
  PREFLIGHT_OUT_OF_ORDER,
  PREFLIGHT_REPLAY,
  ROW_SEPARATOR,
} from "../src/abi";
import { execStatement, queryStatement, Statement } from "./host";
import { COMMIT_CLIENT_MARKER, FLUSH_HEAD, LAST_MUTATION_ID_SQL, PENDING_VERSION } from "./state";
import { extraParam, jsonString, parseI64, stringsParams } from "./text";

const COMMIT_CLIENT = new Statement(COMMIT_CLIENT_MARKER);
const FLUSH = new Statement(FLUSH_HEAD);
const LAST_MUTATION_ID = new Statement(LAST_MUTATION_ID_SQL);
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
export function preflight(groupID: string, clientID: string, id: i64): string {
  const client = stringsParams(groupID, clientID);
  const last = parseI64(queryStatement(LAST_MUTATION_ID, client));
  return status(id, last + 1) + COLUMN_SEPARATOR + last.toString();
}

/** Records a single processed mutation and commits its version, the client's record its head. */
export function finalize(groupID: string, clientID: string, id: i64): void {
  execStatement(FLUSH, stringsParams(groupID, clientID));
  execStatement(COMMIT_CLIENT, stringsParams(groupID, clientID, id));
}

/** The parameters of a statement on the batch's client `index`: the caller's extra parameter `index`. */
function clientParams(group: string, index: i32, last: string = ""): string {
  return "[" + group + "," + extraParam(index) + (last.length > 0 ? "," + last : "") + "]";
}

/**
 * The preflight of a batch, client by client. `plan` has a line per client of the batch: its
 * mutation ids in order, comma separated; the client's id is the caller's extra parameter of
 * the line's index. Each mutation is next ("apply"), already done ("replay") or skips ahead
 * ("ooo"), as if every mutation found next were then processed (applied, or refused by its
 * mutator: either way its id advances). Returns "<status>\t<the client's last id before it>"
 * per mutation, in the plan's order.
 */
export function preflightBatch(groupID: string, plan: string): string {
  const group = jsonString(groupID);
  const clients = plan.split(ROW_SEPARATOR);
  const lines: string[] = [];
  for (let c = 0; c < clients.length; c++) {
    const client = clientParams(group, c);
    let next = parseI64(queryStatement(LAST_MUTATION_ID, client)) + 1;
    const ids = clients[c].split(",");
    for (let i = 0; i < ids.length; i++) {
      const found = status(parseI64(ids[i]), next);
      lines.push(found + COLUMN_SEPARATOR + (next - 1).toString());
      if (found == PREFLIGHT_APPLY) next++;
    }
  }
  return lines.join(ROW_SEPARATOR);
}

/**
 * Records the last processed mutation id of each client of a batch (`lastIDs`: a line per
 * client, whose id is the caller's extra parameter of the line's index), in the caller's
 * transaction, and commits the version: the mutations' writes and their ids become one new
 * version together, or (rolled back) neither does.
 */
export function finalizeBatch(groupID: string, lastIDs: string): void {
  const group = jsonString(groupID);
  const ids = lastIDs.split(ROW_SEPARATOR);
  // The last client's record becomes the head; the others' go to their rows, after the head's
  // own record (when another client's) has gone to its row.
  const last = ids.length - 1;
  execStatement(FLUSH, clientParams(group, last));
  for (let c = 0; c < last; c++) execStatement(RECORD_ONE, clientParams(group, c, ids[c]));
  execStatement(COMMIT_CLIENT, clientParams(group, last, ids[last]));
}
