import * as v from "valibot";
import { IdString, JsonValue, MutationId, MutatorName } from "./fields.js";
import { MAX_MUTATIONS_PER_PUSH } from "./limits.js";

export const ReplicacheMutation = v.object({
  clientID: IdString,
  id: MutationId,
  name: MutatorName,
  args: JsonValue,
  timestamp: v.number(),
});
export type ReplicacheMutation = v.InferOutput<typeof ReplicacheMutation>;

/** `POST /<ns>/replicache/push`: Replicache's push v1. */
export const ReplicachePushRequest = v.object({
  pushVersion: v.number(),
  clientGroupID: IdString,
  profileID: v.optional(v.string()),
  schemaVersion: v.optional(v.string()),
  mutations: v.pipe(v.array(ReplicacheMutation), v.maxLength(MAX_MUTATIONS_PER_PUSH)),
});
export type ReplicachePushRequest = v.InferOutput<typeof ReplicachePushRequest>;
