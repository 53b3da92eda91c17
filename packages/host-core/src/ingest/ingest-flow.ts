import { EngineError } from "@weir/engine-wasm";
import {
  type AdminAction,
  BreakerReopenRequest,
  NotifyRequest,
  type NotifyResponse,
  UpstreamCallError,
} from "@weir/protocol";
import type { FlowResult, IngestContext } from "../flows/flow-context.js";
import { check, noBody } from "../flows/request-body.js";
import { HttpError } from "../http/http-error.js";
import { jsonParts } from "../http/http-parts.js";
import { BreakerOpenError } from "./ingest-breaker.js";
import type { IngestPassResult } from "./ingest-pass.js";
import { IngestStoppedError } from "./ingest-stopped-error.js";

/** The admin actions that run an ingest pass or change its breaker. */
const INGEST_ACTIONS = ["ingest", "resnapshot", "breaker/reopen"] as const satisfies readonly AdminAction[];
export type IngestAction = (typeof INGEST_ACTIONS)[number];

export function isIngestAction(action: AdminAction): action is IngestAction {
  return (INGEST_ACTIONS as readonly string[]).includes(action);
}

/**
 * `POST /<ns>/notify`: the upstream committed; answers once what it committed before the call is
 * applied, or within `upstream.answerWithinMs`: a pass still retrying then answers 503 while it
 * goes on in the background, one still working answers `wall_budget_exceeded`. A notify
 * carrying a watermark the cursor already reached answers at once.
 */
export async function runNotify(ctx: IngestContext, body: unknown, now: number): Promise<FlowResult> {
  const request = body === undefined ? {} : check(NotifyRequest, body);
  const cursor = ctx.upstreamCursor();
  if (request.watermark !== undefined && cursor !== null && BigInt(cursor) >= request.watermark) {
    return answer({ watermark: cursor, applied: 0, outcome: "complete" });
  }
  const result = await passOrRefusal(ctx, {}, now);
  if (result.outcome === "pending_retry") {
    throw new HttpError(
      "upstream_unavailable",
      `the upstream did not answer (${result.error ?? "retries exhausted"}); ingest goes on retrying`,
      result.retryAt === undefined ? {} : { "retry-after": retryAfter(result.retryAt, now) },
    );
  }
  return answer({ watermark: result.cursorAfter, applied: result.rows, outcome: result.outcome });
}

/** `POST /<ns>/admin/ingest`, `.../resnapshot` and `.../breaker/reopen`. */
export async function runIngestAdmin(
  ctx: IngestContext,
  action: IngestAction,
  body: unknown,
  now: number,
): Promise<FlowResult> {
  if (action === "breaker/reopen") {
    const request = body === undefined ? {} : check(BreakerReopenRequest, body);
    const { wasOpen, pass } = ctx.reopenBreaker({ resnapshot: request.resnapshot === true });
    if (!pass) return { response: jsonParts({ reopened: true, wasOpen }), log: { admin: action } };
    const result = await pass.catch((error: unknown) => {
      throw ingestRefusal(error, now);
    });
    return {
      response: jsonParts({ reopened: true, wasOpen, resnapshot: passAnswer(result) }),
      log: { admin: action, ingested: result.rows },
    };
  }
  noBody(body);
  const result = await passOrRefusal(ctx, { resnapshot: action === "resnapshot" }, now);
  return { response: jsonParts(passAnswer(result)), log: { admin: action, ingested: result.rows } };
}

/** A pass as the admin routes answer it (`IngestPassResponse`). */
function passAnswer(result: IngestPassResult) {
  return {
    outcome: result.outcome,
    rows: result.rows,
    bytes: result.bytes,
    batches: result.batches,
    attempts: result.attempts,
    cursorBefore: result.cursorBefore,
    cursorAfter: result.cursorAfter,
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(result.retryAt === undefined ? {} : { retryAt: result.retryAt }),
  };
}

function answer(value: NotifyResponse): FlowResult {
  return { response: jsonParts(value), log: { ingested: value.applied } };
}

/** Runs a pass; what stops it becomes an answer a caller can act on. */
async function passOrRefusal(
  ctx: IngestContext,
  options: { resnapshot?: boolean },
  now: number,
): Promise<IngestPassResult> {
  try {
    return await ctx.ingest(options);
  } catch (error) {
    throw ingestRefusal(error, now);
  }
}

/** What stopped an ingest pass, as the answer a caller can act on. */
export function ingestRefusal(error: unknown, now: number): unknown {
  if (error instanceof BreakerOpenError) {
    const headers = { "retry-after": retryAfter(error.retryAt, now) };
    if (error.reason === "upstream_config") {
      return new HttpError(
        "upstream_misconfigured",
        `${error.message}: check the upstream's URL, token and tables, then POST /admin/breaker/reopen`,
        headers,
      );
    }
    return new HttpError("ingest_paused", error.message, headers);
  }
  if (error instanceof IngestStoppedError) return new HttpError(error.code, error.message);
  if (error instanceof EngineError && error.code === "schema_drift") {
    return new HttpError("schema_drift", `${error.message}; ingest is stopped until an operator reopens it`);
  }
  if (error instanceof UpstreamCallError) {
    return new HttpError("upstream_unavailable", `the upstream answered ${error.status}: ${error.message}`);
  }
  return error;
}

/** Seconds until `at` (epoch ms), at least 1, for Retry-After. */
function retryAfter(at: number, now: number): string {
  return String(Math.max(1, Math.ceil((at - now) / 1000)));
}
