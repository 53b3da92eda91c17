export type LogLevel = "info" | "warn" | "error";

/** Structured logs: one object per event, written as one line by the host. */
export interface Logger {
  log(level: LogLevel, fields: Record<string, unknown>): void;
}

/** One JSON line per event on the console, which every runtime has. */
export const consoleJsonLogger: Logger = {
  log(level, fields) {
    const line = JSON.stringify({ level, time: new Date().toISOString(), ...fields });
    if (level === "error") console.error(line);
    else if (level === "warn") console.warn(line);
    else console.log(line);
  },
};
