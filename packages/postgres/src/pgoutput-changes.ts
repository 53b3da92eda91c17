// Decoding pgoutput: its values as text, a change message as buffered changes, and the
// transaction being collected between its Begin and its Commit.
import { PgoutputPlugin } from "pg-logical-replication";
import type { ChangeBuffer } from "./change-buffer.js";
import type { BufferedChange } from "./change-buffer-schema.js";
import type { TablePlan } from "./read-tables.js";
import { rowChange } from "./row-change.js";

/** A large transaction is written to the buffer in parts of this many changes (memory stays bounded). */
const PENDING_CHUNK = 5_000;

/** A transaction between its Begin and its Commit. */
export interface OpenTransaction {
  watermark: bigint;
  xid: number;
  changes: BufferedChange[];
  written: number;
  tenants: Set<string>;
  shared: boolean;
}

/** Reads pgoutput's values as the text PostgreSQL sent: the column codecs decode them. */
export class TextPgoutputPlugin extends PgoutputPlugin {
  // biome-ignore lint/suspicious/noExplicitAny: the library's message union is untyped here
  override parse(buffer: Buffer): any {
    const message = super.parse(buffer);
    if (message.tag === "relation") {
      for (const column of message.columns) column.parser = (text: string) => text;
    }
    return message;
  }
}

/** The buffered changes of one pgoutput change message. */
// biome-ignore lint/suspicious/noExplicitAny: pgoutput messages are checked by tag
export function changesOf(plans: Map<string, TablePlan>, message: any): BufferedChange[] {
  if (message.tag === "truncate") {
    return message.relations.map((relation: { name: string }) => ({
      tableName: relation.name,
      op: "TRUNCATE" as const,
      rowJson: null,
      oldKeyJson: null,
      keyChanged: false,
      newTenant: null,
      oldTenant: null,
      shared: true,
    }));
  }
  const plan = plans.get(message.relation.name)!;
  return [rowChange(plan, message)];
}

/**
 * Adds a change to the transaction being collected; every PENDING_CHUNK changes, writes them to
 * the buffer as a pending part, unseen until the commit.
 */
export function appendChange(buffer: ChangeBuffer, open: OpenTransaction, change: BufferedChange): void {
  if (change.newTenant !== null) open.tenants.add(change.newTenant);
  if (change.oldTenant !== null) open.tenants.add(change.oldTenant);
  if (change.shared) open.shared = true;
  open.changes.push(change);
  if (open.changes.length >= PENDING_CHUNK) {
    buffer.writePending(open.watermark, open.written, open.changes);
    open.written += open.changes.length;
    open.changes = [];
  }
}
