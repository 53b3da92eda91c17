/** Ingest stopped itself (schema drift) and stays stopped until an operator reopens it. */
export class IngestStoppedError extends Error {
  override readonly name = "IngestStoppedError";
  constructor(
    readonly code: "schema_drift",
    readonly reason: string,
  ) {
    super(`ingest is stopped until an operator reopens it (POST /admin/breaker/reopen): ${reason}`);
  }
}
