import { HttpError } from "../http/http-error.js";

/**
 * Why a namespace cannot be served: its file is damaged (`corrupt`), or a namespace known to hold
 * data has lost its file (`missing`) or had it emptied (`empty`).
 */
export type UnavailableReason = "corrupt" | "missing" | "empty";

const MESSAGES: Record<UnavailableReason, string> = {
  corrupt:
    "this namespace's data cannot be read safely; nothing was read or written, and the operator is told",
  missing:
    "this namespace's data is missing; nothing was read or written until an operator restores it or accepts the loss",
  empty:
    "this namespace's data was emptied; nothing was read or written until an operator restores it or accepts the loss",
};

/**
 * A namespace refused as a whole: every request on it answers 503 `namespace_unavailable`, and
 * other namespaces are not affected. The client learns the reason; the log also gets `detail`
 * (SQLite's error) and `location` (the host's name for the storage, such as a file path).
 */
export class NamespaceUnavailableError extends HttpError {
  constructor(
    readonly reason: UnavailableReason,
    readonly detail: string,
    readonly location?: string,
  ) {
    super("namespace_unavailable", MESSAGES[reason], { "retry-after": "60" }, { reason });
  }
}
