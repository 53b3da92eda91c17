import { EngineError } from "@weir/engine-wasm";
import type { Logger } from "../ports/logger.js";
import { HttpError } from "./http-error.js";
import { jsonParts, type ResponseParts } from "./http-parts.js";
import { errorDetail, internalErrorBody, newRequestId } from "./internal-error.js";
import { refusal } from "./refusal.js";
import type { RequestRecord } from "./request-record.js";

/**
 * The answer to a failed request. Refusals (4xx) say what was wrong. Every 5xx carries a request
 * id, in the body and the `x-request-id` header, also found in the request's log line; one the
 * server did not expect answers a generic message, its error going only to the log.
 */
export function errorAnswer(error: unknown, record: RequestRecord, logger: Logger): ResponseParts {
  const refused = refusal(error);
  if (refused && refused.status < 500) {
    record.error = refused.code;
    // A query stopped past its work budget did that work: its user's quota pays for it.
    if (error instanceof EngineError && error.rowsExamined) {
      record.queryRows = (record.queryRows ?? 0) + error.rowsExamined;
    }
    return jsonParts({ error: refused.code, message: refused.message }, refused.status);
  }
  const known = error instanceof HttpError ? error : null;
  if (known && known.status < 500) {
    record.error = known.code;
    return jsonParts(
      { error: known.code, message: known.message, ...known.details },
      known.status,
      known.headers,
    );
  }
  const requestId = newRequestId();
  record.requestId = requestId;
  if (known instanceof HttpError) {
    record.error = known.code;
    return jsonParts(
      { error: known.code, message: known.message, ...known.details, requestId },
      known.status,
      {
        ...known.headers,
        "x-request-id": requestId,
      },
    );
  }
  record.error = "internal";
  logger.log("error", {
    msg: "request failed",
    requestId,
    ns: record.ns,
    kind: record.kind,
    error: errorDetail(error),
  });
  return jsonParts(internalErrorBody(requestId), 500, { "x-request-id": requestId });
}
