import { type FileHandle, open } from "node:fs/promises";

/**
 * Makes a SQLite database's commits durable off the event loop. The database commits with
 * `synchronous = NORMAL` in WAL mode (a commit is safe from a crash of the process once it
 * returns, since its pages are in the WAL file); `flush` then fsyncs the WAL file in the thread
 * pool, after which every commit that returned before the call survives a power loss too. A
 * commit's frames are in the WAL or, once checkpointed, in the database file, which SQLite
 * fsyncs before it reuses the WAL. One fsync runs at a time; calls made while one runs share the
 * next.
 */
export class WalFlusher {
  private handle: FileHandle | null = null;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly databaseFile: string) {}

  flush(): Promise<void> {
    if (this.queued) return this.queued;
    const next: Promise<void> = this.running
      .catch(() => undefined)
      .then(() => {
        if (this.queued === next) this.queued = null;
        return this.fsync();
      });
    this.queued = next;
    this.running = next;
    return next;
  }

  private async fsync(): Promise<void> {
    if (this.closed) return;
    if (this.handle === null) {
      try {
        this.handle = await open(`${this.databaseFile}-wal`, "r+");
      } catch (error) {
        // No WAL file: nothing is written that is not in the database file already.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
        throw error;
      }
    }
    await this.handle.sync();
  }

  /** Waits for the fsync that runs, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running.catch(() => undefined);
    await this.handle?.close();
    this.handle = null;
  }
}
