/** The admin routes (`/<ns>/admin/<action>`) and the methods each takes. */
export const ADMIN_ACTIONS = {
  health: ["GET"],
  status: ["GET"],
  writer: ["GET", "POST"],
  retention: ["POST"],
  visibility: ["POST"],
  /** Query-aware pull on or off. */
  queries: ["GET", "POST"],
  invalidate: ["POST"],
  fault: ["POST"],
  "drop-next-push-response": ["POST"],
  /** Upstream ingest: a pass now, a new snapshot generation, closing the breaker. */
  ingest: ["POST"],
  resnapshot: ["POST"],
  "breaker/reopen": ["POST"],
} as const;
export type AdminAction = keyof typeof ADMIN_ACTIONS;
