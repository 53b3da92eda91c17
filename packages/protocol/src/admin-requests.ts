import * as v from "valibot";

/** `POST /<ns>/admin/writer`. */
export const WriterRequest = v.strictObject({ enabled: v.boolean() });
export type WriterRequest = v.InferOutput<typeof WriterRequest>;

/** `POST /<ns>/admin/visibility`. */
export const VisibilityRequest = v.strictObject({ enabled: v.boolean() });
export type VisibilityRequest = v.InferOutput<typeof VisibilityRequest>;

/** `POST /<ns>/admin/queries`: query-aware pull on or off. */
export const QueriesRequest = v.strictObject({ enabled: v.boolean() });
export type QueriesRequest = v.InferOutput<typeof QueriesRequest>;

/** `POST /<ns>/admin/retention`: keep the newest `retainChanges` versions of the change log. */
export const RetentionRequest = v.strictObject({
  retainChanges: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
});
export type RetentionRequest = v.InferOutput<typeof RetentionRequest>;

export const FAULT_POINTS = [
  "push_before_mutation",
  "push_after_write_before_commit",
  "push_after_commit_before_response",
  "pull_during_tx",
  "pull_after_commit",
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export const FAULT_KINDS = ["error", "quota"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** `POST /<ns>/admin/fault`: arm a one-shot fault, or clear all of them. */
export const FaultRequest = v.union([
  v.strictObject({ point: v.picklist(FAULT_POINTS), kind: v.picklist(FAULT_KINDS) }),
  v.strictObject({ clear: v.literal(true) }),
]);
export type FaultRequest = v.InferOutput<typeof FaultRequest>;
