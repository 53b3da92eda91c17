import * as v from "valibot";
import { JsonValue } from "./fields.js";

export const MutationRef = v.object({ clientID: v.string(), id: v.number() });
export type MutationRef = v.InferOutput<typeof MutationRef>;

export const MutationResult = v.union([
  v.strictObject({}),
  v.object({ error: v.literal("app"), message: v.string(), details: v.optional(JsonValue) }),
  v.object({ error: v.literal("alreadyProcessed"), details: v.string() }),
]);
export type MutationResult = v.InferOutput<typeof MutationResult>;

export const PushFailedReason = v.picklist([
  "oooMutation",
  "unsupportedPushVersion",
  "parse",
  "database",
  "internal",
]);
export type PushFailedReason = v.InferOutput<typeof PushFailedReason>;

/** A push that failed as a whole, naming the mutations it did not process. */
export const PushFailed = v.object({
  kind: v.literal("PushFailed"),
  origin: v.literal("server"),
  reason: PushFailedReason,
  message: v.string(),
  mutationIDs: v.array(MutationRef),
});
export type PushFailed = v.InferOutput<typeof PushFailed>;

/** The answer to a native push: a result per processed mutation, or a failure naming the rest. */
export const PushResponse = v.object({
  pushResponse: v.union([
    v.object({ mutations: v.array(v.object({ id: MutationRef, result: MutationResult })) }),
    PushFailed,
  ]),
});
export type PushResponse = v.InferOutput<typeof PushResponse>;
