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

/** The ports through which other threads' calls reach the upstream, served by this thread. */
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
 * What the holder of the upstream sends on a port from `upstream.connect()`: the channel calls go
 * to now (served by the reader), or that there is none for a while (its thread is restarting).
 */
type PortControl = { t: "use"; port: MessagePort } | { t: "down" };

/**
 * The ports `upstream.connect()` hands out, kept by the thread that holds the upstream. Each is a
 * control channel: on it the other thread is sent the channel its calls go to (`attach` makes
 * one, served by the reader as it runs now; null while it does not run), and a new one each time
 * the reader's thread is restarted. Calls never pass through this thread.
 */
export class ConnectedPorts {
  private readonly controls = new Set<MessagePort>();
  private closed = false;

  constructor(private readonly attach: () => MessagePort | null) {}

  connect(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    // A closed upstream's port is closed at once: the other thread's calls answer 503.
    if (this.closed) {
      port1.close();
      return port2;
    }
    this.controls.add(port1);
    port1.on("close", () => this.controls.delete(port1));
    port1.unref();
    this.send(port1);
    return port2;
  }

  /** The reader runs again, in a new thread: every connected thread is sent a channel to it. */
  reattach(): void {
    for (const control of this.controls) this.send(control);
  }

  /** The upstream closed: every connected thread's calls are refused from now on. */
  close(): void {
    this.closed = true;
    for (const control of this.controls) control.close();
    this.controls.clear();
  }

  private send(control: MessagePort): void {
    const port = this.attach();
    if (port) control.postMessage({ t: "use", port } satisfies PortControl, [port]);
    else control.postMessage({ t: "down" } satisfies PortControl);
  }
}

/**
 * The upstream as another thread reaches it, through a port from `upstream.connect()` (in a
 * worker thread of the Node host, from `workerConfig.ports`): the same contract, answered by the
 * reader's thread. While that thread is restarting, calls answer 503; once the upstream is
 * closed, they always do.
 */
export function upstreamOverPort(port: MessagePort): PortUpstream {
  if (!(port instanceof MessagePort)) {
    throw new TypeError(
      "upstreamOverPort needs a MessagePort from upstream.connect() (with the Node host's worker threads, one given by workerConfig.ports)",
    );
  }
  /** The channel calls go to; null before the first one comes (calls wait) or while the reader is down. */
  let channel: MessagePort | null = null;
  let told = false;
  const early: unknown[] = [];
  const calls = new UpstreamCalls({
    postMessage(value) {
      if (channel) channel.postMessage(value);
      else if (!told) early.push(value);
      else throw unavailable("the upstream's reader is restarting");
    },
  });
  port.on("message", (control: PortControl) => {
    told = true;
    channel?.close();
    channel = null;
    if (control.t !== "use") {
      calls.fail(unavailable("the upstream's reader is restarting"));
      return;
    }
    const next = control.port;
    channel = next;
    next.on("message", (event: ThreadEvent) => {
      if (event.t === "reply") calls.settle(event);
    });
    // The reader's thread ended: what it had is refused, and calls wait for the next channel.
    next.on("close", () => {
      if (channel !== next) return;
      channel = null;
      calls.fail(unavailable("the upstream's reader stopped; it is restarting"));
    });
    next.unref();
    for (const value of early.splice(0)) next.postMessage(value);
  });
  port.on("close", () => {
    calls.stop(unavailable("the upstream is closed"));
    channel?.close();
  });
  // Waiting replies keep the thread alive; an idle port does not.
  port.unref();
  return {
    source: (namespace) => calls.source(namespace),
    close() {
      calls.stop(unavailable("this end of the upstream is closed"));
      channel?.close();
      port.close();
    },
  };
}
