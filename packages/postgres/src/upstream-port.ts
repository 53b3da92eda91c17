import { MessageChannel, MessagePort } from "node:worker_threads";
import type { UpstreamSource } from "@weir/protocol";
import { UpstreamCalls, unavailable } from "./upstream-calls.js";
import type { PostgresUpstream } from "./upstream-interface.js";
import { type ThreadEvent, type ThreadRequest, toWireError } from "./upstream-thread-messages.js";

/** What another thread holds of an upstream: its contract, through a port. */
export interface PortUpstream {
  source(namespace: string): UpstreamSource;
  /** Closes this end (the upstream goes on). */
  close(): void;
}

/** Answers one call of the contract (or of the upstream's own, on the thread that holds it). */
export function answerCall(upstream: PostgresUpstream, request: ThreadRequest): Promise<unknown> {
  switch (request.t) {
    case "changes":
      return upstream.source(request.namespace).changes(request.watermark, request.limit);
    case "snapshotPage":
      return upstream.source(request.namespace).snapshotPage(request.table, request.cursor, request.limit);
    case "status":
      return upstream.status();
    case "close":
      return upstream.close();
  }
}

/** Answers the contract's calls that arrive on `port` (changes and snapshot pages only). */
function serveContract(port: MessagePort, upstream: PostgresUpstream): void {
  port.on("message", async (request: ThreadRequest) => {
    let event: ThreadEvent;
    if (request.t !== "changes" && request.t !== "snapshotPage") {
      event = {
        t: "reply",
        id: request.id,
        error: { kind: "error", message: "only the contract is served here" },
      };
    } else {
      try {
        event = { t: "reply", id: request.id, value: await answerCall(upstream, request) };
      } catch (error) {
        event = { t: "reply", id: request.id, error: toWireError(error) };
      }
    }
    try {
      port.postMessage(event);
    } catch {}
  });
}

/** The ports through which other threads reach an upstream held by this thread. */
export class ServedPorts {
  private readonly ports = new Set<MessagePort>();

  constructor(private readonly upstream: () => PostgresUpstream) {}

  /** Answers the contract's calls arriving on `port` until it or the upstream closes. */
  serve(port: MessagePort): void {
    serveContract(port, this.upstream());
    this.ports.add(port);
    port.on("close", () => this.ports.delete(port));
  }

  /** A new channel served here: the port to hand to another thread. */
  connect(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    this.serve(port1);
    return port2;
  }

  /** The upstream closed: each connected thread's calls are refused from now on. */
  close(): void {
    for (const port of this.ports) port.close();
    this.ports.clear();
  }
}

/**
 * The upstream as another thread reaches it, through a port from `upstream.connect()` (in a
 * worker thread of the Node host, from `workerConfig.ports`): the same contract, answered by the
 * reader's thread. Calls are refused with 503 once the upstream is closed.
 */
export function upstreamOverPort(port: MessagePort): PortUpstream {
  if (!(port instanceof MessagePort)) {
    throw new TypeError(
      "upstreamOverPort needs a MessagePort from upstream.connect() (with the Node host's worker threads, one given by workerConfig.ports)",
    );
  }
  const calls = new UpstreamCalls(port);
  port.on("message", (event: ThreadEvent) => {
    if (event.t === "reply") calls.settle(event);
  });
  port.on("close", () => calls.stop(unavailable("the upstream is closed")));
  // Waiting replies keep the thread alive; an idle port does not.
  port.unref();
  return {
    source: (namespace) => calls.source(namespace),
    close() {
      calls.stop(unavailable("this end of the upstream is closed"));
      port.close();
    },
  };
}
