import { UpstreamCallError, type UpstreamSource } from "@weir/protocol";
import { checkSourceNamespace } from "./source-namespace.js";
import { fromWireError, type ThreadRequest, type WireError } from "./upstream-thread-messages.js";

/** A request without its id, which `UpstreamCalls` gives it. */
export type CallRequest = ThreadRequest extends infer R
  ? R extends ThreadRequest
    ? Omit<R, "id">
    : never
  : never;

/**
 * Where calls are posted: the reader's `Worker`, or a `MessagePort` connected to it. A target
 * that cannot take a call now throws, and the call is refused with what it threw.
 */
export interface CallTarget {
  postMessage(value: unknown): void;
}

/**
 * The calling end of the upstream across threads: each call posted with an id, settled by the
 * reply of that id; once stopped (the thread ended, the upstream closed), every call pending and
 * every later one is refused with the reason.
 */
export class UpstreamCalls {
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 0;
  private stoppedBy: Error | null = null;

  constructor(private readonly target: CallTarget) {}

  get stopped(): Error | null {
    return this.stoppedBy;
  }

  call<T>(request: CallRequest): Promise<T> {
    if (this.stoppedBy) return Promise.reject(this.stoppedBy);
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.target.postMessage({ ...request, id });
      } catch (error) {
        this.pending.delete(id);
        reject(error);
      }
    });
  }

  settle(reply: { id: number; value?: unknown; error?: WireError }): void {
    const call = this.pending.get(reply.id);
    if (!call) return;
    this.pending.delete(reply.id);
    if (reply.error) call.reject(fromWireError(reply.error));
    else call.resolve(reply.value);
  }

  stop(reason: Error): void {
    this.stoppedBy ??= reason;
    this.fail(this.stoppedBy);
  }

  /** Refuses the calls waiting for an answer (the thread that had them is gone); later ones go on. */
  fail(reason: Error): void {
    for (const call of this.pending.values()) call.reject(reason);
    this.pending.clear();
  }

  /** The contract for one namespace, its calls through this end. */
  source(namespace: string): UpstreamSource {
    return sourceThrough(() => this, namespace);
  }
}

/**
 * The contract for one namespace, each call through the calls `current` answers when it is made
 * (those of the reader's thread running then: a source outlives a restart of it).
 */
export function sourceThrough(current: () => UpstreamCalls, namespace: string): UpstreamSource {
  checkSourceNamespace(namespace);
  return {
    changes: (watermark, limit) => current().call({ t: "changes", namespace, watermark, limit }),
    snapshotPage: (table, cursor, limit) =>
      current().call({ t: "snapshotPage", namespace, table, cursor, limit }),
  };
}

export function unavailable(message: string): UpstreamCallError {
  return new UpstreamCallError(503, "upstream_unavailable", message);
}
