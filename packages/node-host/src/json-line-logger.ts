import { type Logger, logLine } from "@weir/host-core";

export interface JsonLineLogger extends Logger {
  /** Writes the lines still waiting. */
  flush(): void;
}

interface Output {
  write(text: string): unknown;
}

/**
 * One JSON line per event, like host-core's console logger, but written in batches: the lines of
 * one turn of the event loop go out in a single write, since a write per request costs a busy
 * server a large share of its time. Errors are written at once, after whatever waited.
 */
export function jsonLineLogger(
  out: Output = process.stdout,
  errors: Output = process.stderr,
): JsonLineLogger {
  let waiting: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (waiting.length === 0) return;
    const text = waiting.join("");
    waiting = [];
    out.write(text);
  };
  return {
    log(level, fields) {
      const line = `${logLine(level, fields)}\n`;
      if (level === "error") {
        flush();
        errors.write(line);
        return;
      }
      waiting.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
