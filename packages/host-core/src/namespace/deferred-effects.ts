import type { Logger } from "../ports/logger.js";

/** Runs effects queued with `tx.defer`, after their commit; a failing one is logged, not thrown. */
export function runDeferredEffects(
  effects: Array<() => void | Promise<void>>,
  waitUntil: (promise: Promise<unknown>) => void,
  logger: Logger,
  hash: string,
): void {
  for (const effect of effects) {
    const run = Promise.resolve()
      .then(effect)
      .catch((error: unknown) => {
        logger.log("error", { msg: "deferred effect failed", ns: hash, error: String(error) });
      });
    waitUntil(run);
  }
}
