import * as v from "valibot";
import { JsonValue } from "./fields.js";
import { UpstreamWatermark } from "./upstream-watermark.js";

export const UpstreamOp = v.picklist(["INSERT", "UPDATE", "DELETE", "TRUNCATE"]);
export type UpstreamOp = v.InferOutput<typeof UpstreamOp>;

/** One row change of an upstream transaction (`watermark` is the transaction's). */
export const UpstreamChange = v.object({
  watermark: UpstreamWatermark,
  tableName: v.pipe(v.string(), v.minLength(1)),
  op: UpstreamOp,
  /** The new row: null for DELETE and TRUNCATE. */
  rowData: v.nullable(v.record(v.string(), JsonValue)),
  /** The old key (or row) for a DELETE and an UPDATE that changed the key; otherwise null. */
  oldData: v.nullable(v.record(v.string(), JsonValue)),
});
export type UpstreamChange = v.InferOutput<typeof UpstreamChange>;
