import { type Logger, logLine } from "@weir/host-core";

export interface JsonLineLogger extends Logger {
  /** Writes the lines still waiting. */
  flush(): void;
}

interface Output {
  write(text: string): unknown;
}

/** Lines wait at most this long, or until this many characters wait, before one write. */
const FLUSH_AFTER_MS = 50;
const FLUSH_AT_CHARS = 64 * 1024;

/**
 * One JSON line per event, like host-core's console logger, but written in batches: a write
 * per request costs a busy server a large share of its time, so lines go out together at most
 * FLUSH_AFTER_MS after the first of them, or once FLUSH_AT_CHARS wait. Errors are written at
 * once, after whatever waited; `flush` writes the rest (the server calls it as it stops).
 */
export function jsonLineLogger(
  out: Output = process.stdout,
  errors: Output = process.stderr,
): JsonLineLogger {
  let waiting: string[] = [];
  let waitingChars = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const text = waiting.join("");
    waiting = [];
    waitingChars = 0;
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
      waitingChars += line.length;
      if (waitingChars >= FLUSH_AT_CHARS) flush();
      else if (timer === undefined) {
        timer = setTimeout(flush, FLUSH_AFTER_MS);
        timer.unref?.();
      }
    },
    flush,
  };
}
