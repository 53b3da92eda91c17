import * as v from "valibot";

/**
 * The body of every failed request: a code from ERROR_STATUS (or a dialect's own), a message, a
 * request id on a 5xx, and fields some codes add (a refused namespace's `reason`, say).
 */
export const ErrorBody = v.looseObject({
  error: v.string(),
  message: v.string(),
  requestId: v.optional(v.string()),
});
export type ErrorBody = v.InferOutput<typeof ErrorBody>;
