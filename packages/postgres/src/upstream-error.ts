/**
 * A refusal with the HTTP status and error code the upstream server answers it with. Bad input
 * is a 4xx and changes nothing; `upstream_unavailable` (503) means PostgreSQL cannot be reached.
 */
export class UpstreamError extends Error {
  override readonly name: string = "UpstreamError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
