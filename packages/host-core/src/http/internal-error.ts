/**
 * What a client learns of a failure the server did not expect: a generic message and an id. The
 * error itself (which may name files, SQL or internals) goes only to the server's log, under the
 * same id, so a client's report leads an operator to it.
 */
export const INTERNAL_ERROR_MESSAGE = "internal error; the server logged it under this requestId";

/** A fresh id for a 5xx answer and its log line. */
export function newRequestId(): string {
  return crypto.randomUUID();
}

/** The `{ error, message, requestId }` body of an unexpected failure. */
export function internalErrorBody(requestId: string): {
  error: "internal";
  message: string;
  requestId: string;
} {
  return { error: "internal", message: INTERNAL_ERROR_MESSAGE, requestId };
}

/** The error's own text for the log: its stack where it has one. */
export function errorDetail(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
