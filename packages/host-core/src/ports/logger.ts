export type LogLevel = "info" | "warn" | "error";

/** Structured logs: one object per event, written as one line by the host. */
export interface Logger {
  log(level: LogLevel, fields: Record<string, unknown>): void;
}

let timeText = "";
let timeTextAt = Number.NaN;

/**
 * An event as one JSON object: `level`, `time` (ISO 8601), then the fields. A server writes one
 * per request, so the time is formatted once per millisecond and the fields are not copied.
 */
export function logLine(level: LogLevel, fields: Record<string, unknown>): string {
  const now = Date.now();
  if (now !== timeTextAt) {
    timeTextAt = now;
    timeText = new Date(now).toISOString();
  }
  const rest = JSON.stringify(fields);
  const head = `{"level":"${level}","time":"${timeText}"`;
  return rest.length > 2 ? `${head},${rest.slice(1)}` : `${head}}`;
}

/** One JSON line per event on the console, which every runtime has. */
export const consoleJsonLogger: Logger = {
  log(level, fields) {
    const line = logLine(level, fields);
    if (level === "error") console.error(line);
    else if (level === "warn") console.warn(line);
    else console.log(line);
  },
};
