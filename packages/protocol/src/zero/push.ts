import * as v from "valibot";
import { IdString, JsonValue, MutationId, MutatorName } from "../fields.js";
import { MAX_MUTATIONS_PER_PUSH } from "../limits.js";

/** One mutation of a Zero push: a custom mutator by name, or Zero's CRUD (which weir refuses). */
export const ZeroMutation = v.object({
  type: v.picklist(["custom", "crud"]),
  id: MutationId,
  clientID: IdString,
  name: MutatorName,
  args: v.array(JsonValue),
  timestamp: v.number(),
});
export type ZeroMutation = v.InferOutput<typeof ZeroMutation>;

/** `["push", body]`, up: the client's pending mutations. */
export const ZeroPushBody = v.object({
  clientGroupID: IdString,
  mutations: v.pipe(v.array(ZeroMutation), v.maxLength(MAX_MUTATIONS_PER_PUSH)),
  pushVersion: v.number(),
  timestamp: v.number(),
  requestID: v.string(),
});
export type ZeroPushBody = v.InferOutput<typeof ZeroPushBody>;
