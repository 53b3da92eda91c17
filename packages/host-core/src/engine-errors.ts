import { EngineError, UnsupportedVersionError } from "@weir/engine-wasm";

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}

/** The engine's answer to a pullVersion or pushVersion it does not serve. */
export function isUnsupportedVersion(error: unknown): error is UnsupportedVersionError {
  return error instanceof UnsupportedVersionError;
}
