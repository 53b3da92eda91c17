/** Structured logs, one object per event (host-core's loggers are ones). */
export interface Logger {
  log(level: "info" | "warn" | "error", fields: Record<string, unknown>): void;
}
