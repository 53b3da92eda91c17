import * as v from "valibot";
import { JsonValue } from "../fields.js";
import { ZeroMutationID } from "./mutation-id.js";

/** The error kinds of Zero's protocol that weir sends (the client acts on each as named). */
export const ZeroErrorKind = v.picklist([
  "Unauthorized",
  "InvalidConnectionRequest",
  "InvalidConnectionRequestBaseCookie",
  "InvalidConnectionRequestLastMutationID",
  "InvalidMessage",
  "InvalidPush",
  "MutationRateLimited",
  "PushFailed",
  "VersionNotSupported",
  "ServerOverloaded",
  "Internal",
]);
export type ZeroErrorKind = v.InferOutput<typeof ZeroErrorKind>;

const PushFailedCommon = {
  kind: v.literal("PushFailed"),
  message: v.string(),
  /** The mutations the push did not process. */
  mutationIDs: v.array(ZeroMutationID),
  details: v.optional(JsonValue),
};

/**
 * A push that failed as a whole: the app's own refusal (`origin: "server"`), the app's mutate
 * endpoint answering a 4xx (`reason: "http"`), or weir failing to reach it or to parse the push.
 */
export const ZeroPushFailedBody = v.variant("origin", [
  v.object({
    ...PushFailedCommon,
    origin: v.literal("server"),
    reason: v.picklist(["database", "parse", "oooMutation", "unsupportedPushVersion", "internal"]),
  }),
  v.variant("reason", [
    v.object({
      ...PushFailedCommon,
      origin: v.literal("zeroCache"),
      reason: v.literal("http"),
      status: v.number(),
      bodyPreview: v.optional(v.string()),
    }),
    v.object({
      ...PushFailedCommon,
      origin: v.literal("zeroCache"),
      reason: v.picklist(["parse", "internal", "timeout"]),
    }),
  ]),
]);
export type ZeroPushFailedBody = v.InferOutput<typeof ZeroPushFailedBody>;

/** `["error", body]`, down: a refusal. All but `MutationRateLimited` then close the socket. */
export const ZeroErrorBody = v.union([
  ZeroPushFailedBody,
  v.object({
    kind: ZeroErrorKind,
    message: v.string(),
    origin: v.literal("zeroCache"),
    /** ServerOverloaded: how long the client waits before it connects again. */
    minBackoffMs: v.optional(v.number()),
  }),
]);
export type ZeroErrorBody = v.InferOutput<typeof ZeroErrorBody>;
