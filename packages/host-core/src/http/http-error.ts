import { ERROR_STATUS, type ErrorCode } from "@weir/protocol";

/**
 * An error that answers the request with `{ error: code, message }` (and `details`' fields, when
 * given) and the code's status.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
    details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "HttpError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
    this.details = details;
  }
}

/** The server is closing: it finishes what it has and takes nothing new. */
export class ShuttingDownError extends HttpError {
  constructor() {
    super("shutting_down", "the server is shutting down; retry shortly", {
      "retry-after": "1",
      connection: "close",
    });
  }
}
