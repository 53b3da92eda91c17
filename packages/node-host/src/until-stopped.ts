/**
 * Waits for SIGINT or SIGTERM, then closes the server gracefully: it stops accepting, finishes
 * requests in flight and closes the databases. A second signal stops at once.
 */
export function untilStopped(
  server: { close(): Promise<void> },
  note: (line: string) => void,
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      note(`weir: ${signal} received, finishing requests in flight (again to force)`);
      const force = () => process.exit(1);
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      server.close().then(() => {
        process.off("SIGINT", force);
        process.off("SIGTERM", force);
        note("weir: stopped");
        resolvePromise();
      }, reject);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
