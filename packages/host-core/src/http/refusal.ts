import { EngineError } from "@weir/engine-wasm";
import { ERROR_STATUS, UnsupportedVersionError, WireError } from "@weir/protocol";

/** A refusal by the engine or by the wire contract: a code, answered with ERROR_STATUS[code]. */
export function refusal(
  error: unknown,
): { code: keyof typeof ERROR_STATUS; status: number; message: string } | null {
  if (error instanceof EngineError || error instanceof WireError) {
    return { code: error.code, status: ERROR_STATUS[error.code], message: error.message };
  }
  return null;
}

/** A pullVersion or pushVersion the server does not serve. */
export function isUnsupportedVersion(error: unknown): error is UnsupportedVersionError {
  return error instanceof UnsupportedVersionError;
}
