import * as v from "valibot";
import { JsonValue } from "../fields.js";
import { ZeroMutationID } from "./mutation-id.js";

/** A mutation's result as a poke carries it: weir sends application errors only. */
export const ZeroMutationResult = v.object({
  error: v.literal("app"),
  message: v.optional(v.string()),
  details: v.optional(JsonValue),
});
export type ZeroMutationResult = v.InferOutput<typeof ZeroMutationResult>;

/** A `mutationsPatch` entry of a poke: a result to settle, or one the client acknowledged. */
export const ZeroMutationsPatchOp = v.variant("op", [
  v.object({ op: v.literal("put"), mutation: v.object({ id: ZeroMutationID, result: ZeroMutationResult }) }),
  v.object({ op: v.literal("del"), id: ZeroMutationID }),
]);
export type ZeroMutationsPatchOp = v.InferOutput<typeof ZeroMutationsPatchOp>;
