import type { ErrorCode } from "./error-codes.js";

/** A request the wire contract refuses: its error code (the status is ERROR_STATUS[code]). */
export class WireError extends Error {
  override readonly name: string = "WireError";

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A pull or push version the server does not speak; each dialect answers it in its own shape. */
export class UnsupportedVersionError extends WireError {
  override readonly name = "UnsupportedVersionError";

  constructor(readonly versionType: "pull" | "push") {
    super("unsupported_version", `unsupported ${versionType} version`);
  }
}
