import {
  backoffMs,
  MutateAnswer,
  type MutateRequest,
  type MutateResponse,
  parse,
  parseRetryAfter,
} from "@weir/protocol";
import { HttpError } from "../http/http-error.js";
import type { ResponseParts } from "../http/http-parts.js";
import type { UpstreamFetch } from "../ingest/http-upstream.js";

/** The app acknowledged the mutations, or answered something that goes to the client as it is. */
export type MutateOutcome =
  | { kind: "acknowledged"; answer: MutateResponse }
  | { kind: "passThrough"; response: ResponseParts };

export interface MutateCallInput {
  url: string;
  fetch: UpstreamFetch;
  body: MutateRequest;
  /** The caller's `Authorization`, passed on so that the app checks its own user. */
  authorization: string | null;
  namespace: string;
  timeoutMs: number;
  attempts: number;
  now(): number;
  sleep(ms: number): Promise<void>;
}

const RETRIED = new Set([429, 502, 503, 504]);
/** 100 ms doubled per attempt, at most a second. */
const MUTATE_BACKOFF = { firstMs: 100, maxMs: 1_000 };

/** A failed attempt that may go again, and how long its answer asked to wait. */
class Retry {
  constructor(
    readonly reason: string,
    readonly retryAfterMs?: number,
  ) {}
}

/**
 * Calls the app's mutate endpoint. A network failure, a timeout or a 429/502/503/504 is tried
 * again, up to `attempts` in all, after 100 ms doubled per attempt up to a second (a
 * `Retry-After` wins); then it is a 503 `app_unavailable`. A 200 must be a mutate answer: an
 * acknowledgement, or a native `PushFailed`, which passes through. Any other 4xx passes through
 * as it is; any other answer is a 502 `mutate_failed`.
 */
export async function callMutate(input: MutateCallInput): Promise<MutateOutcome> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-weir-namespace": input.namespace,
  };
  if (input.authorization !== null) headers.authorization = input.authorization;
  const payload = JSON.stringify(input.body);
  let last: Retry = new Retry("no attempt");
  for (let attempt = 1; attempt <= input.attempts; attempt++) {
    if (attempt > 1) {
      await input.sleep(backoffMs(MUTATE_BACKOFF, attempt - 1, { retryAfterMs: last.retryAfterMs }));
    }
    const outcome = await attempt1(input, headers, payload);
    if (!(outcome instanceof Retry)) return outcome;
    last = outcome;
  }
  throw new HttpError(
    "app_unavailable",
    `the app's mutate endpoint did not answer (${last.reason}) after ${input.attempts} attempts; nothing was acknowledged, push again`,
    last.retryAfterMs === undefined ? {} : { "retry-after": String(Math.ceil(last.retryAfterMs / 1000)) },
  );
}

async function attempt1(
  input: MutateCallInput,
  headers: Record<string, string>,
  payload: string,
): Promise<MutateOutcome | Retry> {
  let response: Response;
  let text: string;
  try {
    response = await input.fetch(input.url, {
      method: "POST",
      headers,
      body: payload,
      signal: AbortSignal.timeout(input.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    return new Retry(timedOut ? `no answer in ${input.timeoutMs} ms` : (error as Error).message);
  }
  if (RETRIED.has(response.status)) {
    return new Retry(`${response.status}`, parseRetryAfter(response.headers.get("retry-after"), input.now()));
  }
  if (response.status >= 400 && response.status < 500) {
    return {
      kind: "passThrough",
      response: {
        status: response.status,
        headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
        body: text,
      },
    };
  }
  if (response.status !== 200) {
    throw new HttpError("mutate_failed", `the app's mutate endpoint answered ${response.status}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HttpError("mutate_failed", "the app's mutate answer is not JSON");
  }
  const answer = parse(MutateAnswer, json);
  if (!answer.ok) throw new HttpError("mutate_failed", `the app's mutate answer: ${answer.message}`);
  if ("pushResponse" in answer.value) {
    return {
      kind: "passThrough",
      response: { status: 200, headers: { "content-type": "application/json" }, body: text },
    };
  }
  return { kind: "acknowledged", answer: answer.value };
}
