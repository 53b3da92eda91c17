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
  close(): Promise<void>;
}
