import * as v from "valibot";
import { UpstreamWatermark } from "./upstream-watermark.js";

/** How an ingest pass ended: caught up, or stopped to go on later (and why). */
export const INGEST_OUTCOMES = [
  "complete",
  "pending_budget",
  "pending_retry",
  "wall_budget_exceeded",
  "lease_busy",
] as const;
export type IngestOutcome = (typeof INGEST_OUTCOMES)[number];

/**
 * `POST /<ns>/notify`, from the upstream (or the app) after it committed: ingest now. With a
 * `watermark`, a namespace whose cursor already reached it answers at once.
 */
export const NotifyRequest = v.strictObject({ watermark: v.optional(UpstreamWatermark) });
export type NotifyRequest = v.InferOutput<typeof NotifyRequest>;

/** A watermark as it is answered: a decimal string (64-bit), null before the first batch. */
const AnsweredWatermark = v.nullable(v.pipe(v.string(), v.regex(/^(0|[1-9][0-9]*)$/)));

/** The answer to a notify, once the batch it announced is applied. */
export const NotifyResponse = v.strictObject({
  watermark: AnsweredWatermark,
  /** Rows this call's pass wrote (0 when the cursor was already there). */
  applied: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  outcome: v.picklist(INGEST_OUTCOMES),
});
export type NotifyResponse = v.InferOutput<typeof NotifyResponse>;

/** `POST /<ns>/admin/ingest` and `POST /<ns>/admin/resnapshot`: one pass, and how it went. */
export const IngestPassResponse = v.strictObject({
  outcome: v.picklist(INGEST_OUTCOMES),
  rows: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  bytes: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  batches: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  attempts: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  cursorBefore: AnsweredWatermark,
  cursorAfter: AnsweredWatermark,
  error: v.optional(v.string()),
  /** When a retry may go (epoch ms), after `pending_retry`. */
  retryAt: v.optional(v.number()),
});
export type IngestPassResponse = v.InferOutput<typeof IngestPassResponse>;

/**
 * `POST /<ns>/admin/breaker/reopen`, no body or `{ resnapshot }`: with `resnapshot: true` a new
 * snapshot generation starts in the same step, so the changes buffered before a fix upstream are
 * never applied again (a pull or poll in between would otherwise run them first).
 */
export const BreakerReopenRequest = v.strictObject({ resnapshot: v.optional(v.boolean()) });
export type BreakerReopenRequest = v.InferOutput<typeof BreakerReopenRequest>;

/** The breaker is closed, with a fresh window; with `resnapshot`, how the generation's pass went. */
export const BreakerReopenResponse = v.strictObject({
  reopened: v.literal(true),
  wasOpen: v.boolean(),
  resnapshot: v.optional(IngestPassResponse),
});
export type BreakerReopenResponse = v.InferOutput<typeof BreakerReopenResponse>;

/**
 * The header a pull answer carries while the namespace's ingest is stopped (its value the code:
 * `schema_drift`): the replica no longer follows its upstream until an operator reopens it.
 */
export const INGEST_STOPPED_HEADER = "weir-ingest-stopped";
