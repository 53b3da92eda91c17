import type { MessagePort } from "node:worker_threads";
import type { IngestEvent, RequestRecord, Subscription, WakeTarget } from "@weir/host-core";

/**
 * What the routing thread and a namespace worker say to each other over the worker's port. The
 * routing thread keeps every socket; a worker runs the namespaces that hash to it and answers
 * their requests, asks for wakes and sends Zero frames by socket id.
 */
export type ToWorker =
  | {
      t: "request";
      id: number;
      method: string;
      url: string;
      headers: [string, string][];
      body: Uint8Array | null;
    }
  /** The Zero upgrade of request `id` was made (the socket is `id` from now on), or failed. */
  | { t: "zeroOpen"; id: number }
  | { t: "zeroFrame"; id: number; frame: string }
  | { t: "zeroClosed"; id: number }
  | { t: "wakeOpen"; id: number; namespace: string; clientID: string; subscription: Subscription }
  | { t: "wakeClosed"; id: number }
  | { t: "upstreamCommitted"; namespaces: string[] }
  /** The namespace's wake sockets came with it from another worker: poll its upstream while they are open. */
  | { t: "watch"; namespace: string }
  /** Close the namespace once its last request is answered: another worker takes it over. */
  | { t: "release"; namespace: string }
  | { t: "close" };

/** A worker's answer to a request: the response parts host-core gave, as data. */
export interface WorkerAnswer {
  status: number;
  headers: Record<string, string>;
  /** A large body comes as its UTF-8 bytes, moved to the routing thread rather than copied. */
  body: string | Uint8Array | null;
  drop?: boolean;
  /** An accepted wake socket. */
  upgrade?: WakeTarget;
  /**
   * An accepted Zero connect: the protocol to echo and whom it acts for (null: refused); the
   * worker holds the rest under the request's id.
   */
  zero?: { protocol: string | null; userID: string | null };
}

/** What a worker reports beside its answers: request records and ingest events for the metrics, and its gauges. */
export interface WorkerReport {
  records: RequestRecord[];
  ingest: IngestEvent[];
  openNamespaces: number;
  unavailableNamespaces: number;
}

export type FromWorker =
  | { t: "ready" }
  | { t: "failed"; message: string }
  | { t: "answer"; id: number; answer: WorkerAnswer; report: WorkerReport | null }
  | { t: "report"; report: WorkerReport }
  | { t: "zeroSend"; id: number; frames: string[] }
  | { t: "zeroClose"; id: number; code: number; reason: string }
  | { t: "wake"; ids: number[] }
  /**
   * A step of the namespace (a transaction) held the worker `ms`, past the step budget; or, with
   * `busy`, its steps held it `ms` of a second its neighbours stepped in, past half (BusyShare).
   */
  | { t: "overBudget"; namespace: string; ms: number; busy?: true }
  /** The namespace asked to be released is closed. */
  | { t: "released"; namespace: string }
  | { t: "closed" };

/** What a worker is started with (its `workerData`). */
export interface WorkerInit {
  /** The module whose default export is the options (or a function answering them). */
  module: string;
  argument: unknown;
  /** Ports of this worker's own (`workerConfig.ports`), passed to the module's function. */
  ports: Record<string, MessagePort>;
  /** This worker's share of the open-namespace cap. */
  maxOpenNamespaces: number;
  /** Steps longer than this are reported (`overBudget`); null: none is. */
  stepBudgetMs: number | null;
  /** Whether this is the overflow worker (there a busy namespace counts alone too: BusyShare). */
  overflow: boolean;
}
