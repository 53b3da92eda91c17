import * as v from "valibot";
import { JsonValue } from "./fields.js";
import { MutationRef, PushFailed } from "./push-response.js";
import { UpstreamWatermark } from "./upstream-watermark.js";

/**
 * What a namespace with delegated push sends the app's mutate endpoint: the push's mutations that
 * are next for their clients (never a replay), in the native push shape, with the caller's
 * `Authorization` and the namespace in `x-weir-namespace`.
 */
export const MutateRequest = v.strictObject({
  clientGroupID: v.string(),
  pushVersion: v.literal(1),
  mutations: v.array(
    v.strictObject({
      type: v.literal("custom"),
      id: v.number(),
      clientID: v.string(),
      name: v.string(),
      args: v.array(JsonValue),
      timestamp: v.optional(v.number()),
    }),
  ),
});
export type MutateRequest = v.InferOutput<typeof MutateRequest>;

/** The app's result for one mutation: applied, or an application error (the id still advances). */
export const MutateResult = v.union([
  v.strictObject({}),
  v.object({ error: v.literal("app"), message: v.string(), details: v.optional(JsonValue) }),
]);
export type MutateResult = v.InferOutput<typeof MutateResult>;

/**
 * What the app answers a mutate call with: every forwarded mutation acknowledged with its result,
 * and, when it knows it, the upstream watermark its writes reached (the namespace ingests at least
 * that far before it acknowledges the mutations to the client). A native `{ pushResponse:
 * PushFailed }` answer instead passes through to the client unchanged.
 */
export const MutateResponse = v.object({
  mutations: v.array(v.object({ id: MutationRef, result: MutateResult })),
  watermark: v.optional(UpstreamWatermark),
});
export type MutateResponse = v.InferOutput<typeof MutateResponse>;

/** The app's answer, either shape. */
export const MutateAnswer = v.union([MutateResponse, v.object({ pushResponse: PushFailed })]);
export type MutateAnswer = v.InferOutput<typeof MutateAnswer>;
