/** A running host the suite talks to over HTTP. */
export interface ConformanceTarget {
  /** Base URL, e.g. `http://127.0.0.1:4848` (read again after `restart`). */
  readonly url: string;
  /** The Authorization header value that authenticates as `userID`. */
  auth(userID: string): string | Promise<string>;
  /** Stops and starts the host on the same data, when the host keeps data across restarts. */
  restart?(): Promise<void>;
  /** What deferred effects did, when the host runs in the suite's process (see conformanceConfig). */
  effects?(): Array<{ name: string; id: string }>;
  /**
   * Writes to a namespace's tables as a host's own job does (not through a push), committing
   * them as a version; for hosts whose tests run in the suite's process.
   */
  writeOutsidePush?(namespace: string, sql: string, params: unknown[]): Promise<void>;
  close(): Promise<void>;
}
