import type { ErrorCode } from "@weir/protocol";
import { COLUMN_SEPARATOR, ERROR_MARK } from "./abi.js";

/**
 * A refusal by the engine, with one of the protocol's error codes. The engine knows no HTTP: a
 * host answers the code with ERROR_STATUS[code].
 */
export class EngineError extends Error {
  override readonly name = "EngineError";

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The hash of the query a `query_budget_exceeded` refusal names, when it names one. */
    readonly query?: string,
    /** The probe rows a `query_budget_exceeded` refusal's pull examined before it was stopped. */
    readonly rowsExamined?: number,
  ) {
    super(message);
  }
}

/**
 * Whether `error` is a query the work meter stopped past `queryBudgetMs` (not a refusal by the
 * group's caps or by `maxQueryRows`, which cost little): its pull held the thread for about the
 * budget before it was refused.
 */
export function isWorkRefusal(error: unknown): boolean {
  return (
    error instanceof EngineError && error.code === "query_budget_exceeded" && error.rowsExamined !== undefined
  );
}

/** Turns the engine's "!<code>\t<message>" answers into thrown EngineErrors. */
export function checkEngineResult(result: string): string {
  if (!result.startsWith(ERROR_MARK)) return result;
  const tab = result.indexOf(COLUMN_SEPARATOR);
  throw new EngineError(result.slice(ERROR_MARK.length, tab) as ErrorCode, result.slice(tab + 1));
}
