import type { UpstreamChangesPage as ChangesPage, UpstreamChange } from "@weir/protocol";
import type { ChangeBuffer } from "./change-buffer.js";
import type { StoredChange } from "./change-buffer-schema.js";

function parse(json: string | null): Record<string, unknown> | null {
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}

/**
 * A stored change as `tenant` sees it. A row that moved from this tenant to another is a DELETE
 * here, and one that moved in is an INSERT, so a namespace only ever holds its own rows.
 */
function shape(row: StoredChange, tenant: string | undefined): UpstreamChange | null {
  const base = { watermark: row.watermark, tableName: row.table_name };
  const keyChanged = row.key_changed === 1n;
  if (tenant === undefined || row.shared === 1n || row.op === "TRUNCATE") {
    return {
      ...base,
      op: row.op,
      rowData: parse(row.row_data),
      oldData: row.op === "DELETE" || keyChanged ? parse(row.old_key) : null,
    };
  }
  const wasHere = row.old_tenant === tenant;
  const isHere = row.new_tenant === tenant;
  switch (row.op) {
    case "INSERT":
      return isHere ? { ...base, op: "INSERT", rowData: parse(row.row_data), oldData: null } : null;
    case "DELETE":
      return wasHere ? { ...base, op: "DELETE", rowData: null, oldData: parse(row.old_key) } : null;
    default:
      if (wasHere && isHere) {
        return {
          ...base,
          op: "UPDATE",
          rowData: parse(row.row_data),
          oldData: keyChanged ? parse(row.old_key) : null,
        };
      }
      if (wasHere) return { ...base, op: "DELETE", rowData: null, oldData: parse(row.old_key) };
      if (isHere) return { ...base, op: "INSERT", rowData: parse(row.row_data), oldData: null };
      return null;
  }
}

/**
 * The answer to `changes(after, limit)` for one namespace (`tenant` undefined when no table has
 * a tenant column). It holds whole transactions: once `limit` changes are in, it finishes the
 * transaction it is in and stops there, so a transaction larger than `limit` arrives whole. The
 * caller has checked that `after` lies between the floor and `through`.
 */
export function readNamespaceChanges(
  buffer: ChangeBuffer,
  tenant: string | undefined,
  after: bigint,
  limit: number,
): ChangesPage {
  const head = buffer.head;
  const through = buffer.through;
  const changes: UpstreamChange[] = [];
  let stopAt: bigint | null = null;
  let cut = false;
  for (const row of buffer.read(after, head, tenant)) {
    if (stopAt !== null && row.watermark !== stopAt) {
      cut = true;
      break;
    }
    const change = shape(row, tenant);
    if (change === null) continue;
    changes.push(change);
    if (stopAt === null && changes.length >= limit) stopAt = row.watermark;
  }
  // Cut short: everything up to the last included transaction is in. Otherwise everything the
  // stream was read through (read together with the head: nothing is buffered in between).
  return { watermark: cut && stopAt !== null ? stopAt : through, changes };
}
