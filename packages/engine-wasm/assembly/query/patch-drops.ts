// The queries a pull's patch deletes, told before the patch is applied: the pull evaluates none
// of them first (a client can always delete a query whose evaluation would refuse its pulls).
import { COLUMN_SEPARATOR, QUERY_OP_CLEAR, QUERY_OP_DEL, ROW_SEPARATOR } from "../../src/abi";
import { queryRows } from "../host";
import { extraParam, params } from "../text";

/** The queries a patch deletes (all of them, with a clear). */
export class Drops {
  private all: bool = false;
  private hashes: Set<string> = new Set<string>();

  constructor(patchText: string) {
    const lines = patchText.length == 0 ? new Array<string>(0) : patchText.split(ROW_SEPARATOR);
    for (let i = 0; i < lines.length; i++) {
      const fields = lines[i].split(COLUMN_SEPARATOR);
      if (fields[0] == QUERY_OP_CLEAR) this.all = true;
      if (fields[0] != QUERY_OP_DEL) continue;
      // The hash as storedQueries quotes it.
      const quoted = queryRows("SELECT json_quote(?)", params([extraParam(I32.parseInt(fields[1], 10))]));
      this.hashes.add(quoted[0][0]);
    }
  }

  /** Whether the patch deletes the query `hash` (as storedQueries quotes it). */
  has(hash: string): bool {
    return this.all || this.hashes.has(hash);
  }
}
