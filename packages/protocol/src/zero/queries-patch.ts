import * as v from "valibot";
import { IdString, JsonValue, MutatorName } from "../fields.js";
import { MAX_QUERY_PATCH_OPS } from "../limits.js";

/** A change to a client's desired queries, as it sends it. A put names a query the server defines. */
export const ZeroQueryOp = v.variant("op", [
  v.object({
    op: v.literal("put"),
    hash: IdString,
    ttl: v.optional(v.number()),
    name: v.optional(MutatorName),
    args: v.optional(v.array(JsonValue)),
    ast: v.optional(v.unknown()),
  }),
  v.object({ op: v.literal("del"), hash: IdString }),
  v.object({ op: v.literal("clear") }),
]);
export type ZeroQueryOp = v.InferOutput<typeof ZeroQueryOp>;

/** A client's change to its desired queries, bounded as a native pull's query patch is. */
export const ZeroQueriesPatch = v.pipe(v.array(ZeroQueryOp), v.maxLength(MAX_QUERY_PATCH_OPS));

/** A queries patch op as pokes carry it (`desiredQueriesPatches`, `gotQueriesPatch`). */
export const ZeroPokeQueryOp = v.variant("op", [
  v.object({ op: v.literal("put"), hash: v.string() }),
  v.object({ op: v.literal("del"), hash: v.string() }),
  v.object({ op: v.literal("clear") }),
]);
export type ZeroPokeQueryOp = v.InferOutput<typeof ZeroPokeQueryOp>;
