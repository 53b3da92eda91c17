import type { BufferedChange } from "./change-buffer-schema.js";
import type { TablePlan } from "./read-tables.js";

/** A tuple as pgoutput sends it: text values, null, or undefined for a value it left out. */
type Tuple = Record<string, string | null | undefined>;

export interface RowMessage {
  tag: "insert" | "update" | "delete";
  relation: { name: string };
  new?: Tuple;
  old?: Tuple | null;
  key?: Tuple | null;
}

function textOf(plan: TablePlan, tuple: Tuple, column: string): string | null {
  const value = tuple[column];
  if (value === undefined) {
    // An unchanged TOASTed value with no old row to take it from: only without REPLICA IDENTITY FULL.
    throw new Error(
      `table ${plan.name}: column ${column} arrived without its value; the table needs REPLICA IDENTITY FULL`,
    );
  }
  return value;
}

function rowJson(plan: TablePlan, tuple: Tuple): string {
  const row: Record<string, unknown> = {};
  for (const column of plan.columns) {
    const text = textOf(plan, tuple, column.name);
    row[column.name] = text === null ? null : column.codec.decode(text);
  }
  return JSON.stringify(row);
}

function keyJson(plan: TablePlan, tuple: Tuple): string {
  const key: Record<string, unknown> = {};
  for (const name of plan.primaryKey) {
    const column = plan.columns.find((c) => c.name === name)!;
    key[name] = column.codec.decode(textOf(plan, tuple, name)!);
  }
  return JSON.stringify(key);
}

function tenantOf(plan: TablePlan, tuple: Tuple): string | null {
  return plan.tenantColumn === null ? null : textOf(plan, tuple, plan.tenantColumn);
}

/**
 * A decoded insert, update or delete as the buffer keeps it: the new row in weir's types, the
 * old key, whether the key changed, and the tenants of the old and new row.
 */
export function rowChange(plan: TablePlan, message: RowMessage): BufferedChange {
  const shared = plan.tenantColumn === null;
  const base = { tableName: plan.name, shared };
  if (message.tag === "insert") {
    const row = message.new!;
    return {
      ...base,
      op: "INSERT",
      rowJson: rowJson(plan, row),
      oldKeyJson: null,
      keyChanged: false,
      newTenant: tenantOf(plan, row),
      oldTenant: null,
    };
  }
  const old = message.old ?? message.key ?? null;
  if (old === null) {
    throw new Error(
      `table ${plan.name}: an ${message.tag} arrived without the old row; it needs REPLICA IDENTITY FULL`,
    );
  }
  if (message.tag === "delete") {
    return {
      ...base,
      op: "DELETE",
      rowJson: null,
      oldKeyJson: keyJson(plan, old),
      keyChanged: false,
      newTenant: null,
      oldTenant: tenantOf(plan, old),
    };
  }
  const row = message.new!;
  const keyChanged = plan.primaryKey.some((name) => old[name] !== row[name]);
  return {
    ...base,
    op: "UPDATE",
    rowJson: rowJson(plan, row),
    oldKeyJson: keyJson(plan, old),
    keyChanged,
    newTenant: tenantOf(plan, row),
    oldTenant: tenantOf(plan, old),
  };
}
