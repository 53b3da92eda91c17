import * as v from "valibot";
import { JsonValue, Version } from "./fields.js";

export const RowPatchOp = v.variant("op", [
  v.object({ op: v.literal("clear") }),
  v.object({ op: v.literal("put"), tableName: v.string(), value: v.record(v.string(), JsonValue) }),
  v.object({ op: v.literal("del"), tableName: v.string(), id: v.record(v.string(), JsonValue) }),
]);
export type RowPatchOp = v.InferOutput<typeof RowPatchOp>;

/** The answer to a native pull: caught up, or a patch since the cookie. */
export const PullResponse = v.union([
  v.object({ cookie: Version, unchanged: v.literal(true) }),
  v.object({
    cookie: Version,
    lastMutationIDChanges: v.record(v.string(), v.number()),
    /** A query-aware pull: the hashes of the active queries complete at the cookie (a cut answer: not all). */
    gotQueries: v.optional(v.array(v.string())),
    /** Query names the server does not define, when it tolerates them: their hashes, ignored. */
    unknownQueries: v.optional(v.array(v.string())),
    rowsPatch: v.array(RowPatchOp),
  }),
]);
export type PullResponse = v.InferOutput<typeof PullResponse>;
