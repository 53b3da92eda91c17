import type { ErrorCode } from "@weir/protocol";

/** A refusal by the engine, with the HTTP status and error code a host should answer with. */
export class EngineError extends Error {
  override readonly name = "EngineError";

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const FAILURE_MARK = "!";

/** Turns the engine's "!<status>\t<code>\t<message>" answers into thrown EngineErrors. */
export function checkEngineResult(result: string): string {
  if (!result.startsWith(FAILURE_MARK)) return result;
  const [status, code, ...message] = result.slice(1).split("\t");
  throw new EngineError(Number(status), code as ErrorCode, message.join("\t"));
}
