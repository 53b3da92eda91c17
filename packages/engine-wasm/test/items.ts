import type { QueryPatchOp, Schema } from "../src/types.js";
import type { Namespace } from "./fixtures.js";

/** Items of a kind, with a note: the table the answer-time and ranges tests fill. */
export const itemSchema: Schema = {
  tables: { item: { columns: { id: "string", kind: "string", note: "string" }, primaryKey: ["id"] } },
};

/** A query of the items of `kind`, in id order (no limit: each row held by its own values). */
export const ofKind = (kind: string): QueryPatchOp => ({
  op: "put",
  hash: `kind-${kind}`,
  name: "ofKind",
  args: [kind],
  ast: {
    table: "item",
    orderBy: [["id", "asc"]],
    where: {
      type: "simple",
      op: "=",
      left: { type: "column", name: "kind" },
      right: { type: "literal", value: kind },
    },
  },
});

/** The rows of `kind` now, as a client keys them. */
export function rowsOfKind(ns: Namespace, kind: string): Map<string, unknown> {
  const rows = ns.db.adapter.query("SELECT id, kind, note FROM item WHERE kind = ? ORDER BY id", [kind]);
  return new Map(rows.map(([id, k, note]) => [`item/${JSON.stringify([id])}`, { id, kind: k, note }]));
}
