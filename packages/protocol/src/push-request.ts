import * as v from "valibot";
import { IdString, JsonValue, MutationId, MutatorName } from "./fields.js";
import { MAX_MUTATIONS_PER_PUSH } from "./limits.js";

export const Mutation = v.strictObject({
  type: v.literal("custom"),
  id: MutationId,
  clientID: IdString,
  name: MutatorName,
  args: v.array(JsonValue),
  timestamp: v.optional(v.number()),
});
export type Mutation = v.InferOutput<typeof Mutation>;

/**
 * `POST /<ns>/push`: the native dialect's push. `pushVersion` is checked after the shape,
 * so that an unknown version answers `unsupportedPushVersion` rather than `parse`.
 */
export const PushRequest = v.strictObject({
  clientGroupID: IdString,
  pushVersion: v.number(),
  mutations: v.pipe(v.array(Mutation), v.maxLength(MAX_MUTATIONS_PER_PUSH)),
});
export type PushRequest = v.InferOutput<typeof PushRequest>;

export const SUPPORTED_PUSH_VERSION = 1;
