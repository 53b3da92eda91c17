import type { QueryPatchOp, Schema } from "../src/types.js";
import type { Namespace } from "./fixtures.js";

/**
 * Items with a kind, a rank that may be NULL (a REAL: a fraction too) and a note: the table the
 * window tests fill (a window of more rows than a page reads is read in pages of its order).
 */
export const rankedItemSchema: Schema = {
  tables: {
    item: {
      columns: { id: "string", kind: "string", rank: { type: "number", nullable: true }, note: "string" },
      primaryKey: ["id"],
    },
  },
};

export type Order = [string, "asc" | "desc"][];

/** A query of the first `limit` items of kind a in `order`, which the engine ends with the key. */
export const windowOfA = (order: Order, limit: number, hash = "window"): QueryPatchOp => ({
  op: "put",
  hash,
  name: "window",
  args: [],
  ast: {
    table: "item",
    orderBy: order,
    limit,
    where: {
      type: "simple",
      op: "=",
      left: { type: "column", name: "kind" },
      right: { type: "literal", value: "a" },
    },
  },
});

/** Rows as a client keys them, from (id, kind, rank, note) rows. */
function keyed(rows: unknown[][]): Map<string, unknown> {
  return new Map(
    rows.map(([id, kind, rank, note]) => [`item/${JSON.stringify([id])}`, { id, kind, rank, note }]),
  );
}

/** Every item now, as a client keys it. */
export function itemsNow(ns: Namespace): Map<string, unknown> {
  return keyed(ns.db.adapter.query("SELECT id, kind, rank, note FROM item", []));
}

/** The window SQLite's own ORDER BY ... LIMIT gives now (`orderSql` ends with the key), as a client keys it. */
export function windowNow(ns: Namespace, orderSql: string, limit: number): Map<string, unknown> {
  return keyed(
    ns.db.adapter.query(
      `SELECT id, kind, rank, note FROM item WHERE kind = 'a' ORDER BY ${orderSql} LIMIT ${limit}`,
      [],
    ),
  );
}
