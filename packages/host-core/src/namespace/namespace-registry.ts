import { HttpError } from "../http/http-error.js";
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { NamespaceStore, OpenContext, Storage } from "../ports/storage.js";
import type { NamespaceService } from "./namespace-service.js";
import { NamespaceUnavailableError, type UnavailableReason } from "./namespace-unavailable-error.js";
import { storageFailure } from "./storage-failure.js";

/**
 * The share of the open-namespace slots one user may hold at once: a quarter (at least one). A
 * user's request for one more namespace closes that user's own least recently used idle one, or
 * is refused while each of theirs is serving a request; others' namespaces keep their slots.
 */
const USER_SHARE_OF_OPEN = 4;

/** How many open namespaces one user may hold, of `maxOpen`. */
function userShareOfOpen(maxOpen: number): number {
  return Math.max(1, Math.ceil(maxOpen / USER_SHARE_OF_OPEN));
}

/** How often a release looks again whether the namespace's last request is done. */
const RELEASE_POLL_MS = 5;

/** Names kept of namespaces an upstream committed for while they were closed. */
const MAX_COMMITTED_WHILE_CLOSED = 10_000;

export interface RegistryInit {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  /** Namespaces open at once at most; at the cap the least recently used idle one is closed. */
  maxOpen: number;
  /** The service of a namespace whose store just opened (it installs the schema). */
  serve(namespace: string, store: NamespaceStore): Promise<NamespaceService>;
}

/** What opening a namespace for a request knows of it. */
export interface AcquireContext extends OpenContext {
  /** Throws to refuse creating the namespace (a quota); called only when it does not exist yet. */
  admitCreation?(): void | Promise<void>;
}

export interface Unavailable {
  reason: UnavailableReason;
  /** When it was first refused (the clock's `now`). */
  since: number;
}

/**
 * The namespaces a host has open: opened on first use (one open at a time per namespace), closed
 * when idle, or when the cap needs room, least recently used first. A namespace whose store is
 * damaged or lost is refused as a whole and noted (logged once, with the store's location);
 * one whose engine or database failed while open is taken out of service and opened afresh on
 * its next request.
 */
export class NamespaceRegistry {
  private readonly open = new Map<string, NamespaceService>();
  /** The user whose request opened each open namespace (none for an operator's or an upstream's). */
  private readonly openedBy = new Map<string, string>();
  private readonly opening = new Map<string, Promise<NamespaceService>>();
  private readonly refused = new Map<string, Unavailable>();
  /** Namespaces an upstream in the process committed for while they were not open. */
  private readonly committedWhileClosed = new Set<string>();

  constructor(private readonly init: RegistryInit) {}

  /** The namespace's service if it is open. */
  get(name: string): NamespaceService | undefined {
    return this.open.get(name);
  }

  /** The namespace's service, opening (and maybe creating) its database first. */
  acquire(name: string, context: AcquireContext = {}): Promise<NamespaceService> {
    const open = this.open.get(name);
    if (open) return Promise.resolve(open);
    let opening = this.opening.get(name);
    if (!opening) {
      opening = this.openNamespace(name, context).finally(() => this.opening.delete(name));
      this.opening.set(name, opening);
    }
    return opening;
  }

  /**
   * An upstream in the process committed changes for a namespace that is not open: when it
   * opens, its first pull or push ingests first, however recent its stored last pass (a restart
   * keeps that pass's freshness). The newest 10,000 names are kept.
   */
  upstreamCommittedWhileClosed(name: string): void {
    this.committedWhileClosed.delete(name);
    this.committedWhileClosed.add(name);
    if (this.committedWhileClosed.size > MAX_COMMITTED_WHILE_CLOSED) {
      const oldest = this.committedWhileClosed.values().next().value;
      if (oldest !== undefined) this.committedWhileClosed.delete(oldest);
    }
  }

  get size(): number {
    return this.open.size;
  }

  /** Namespaces refused as damaged or lost, with why and since when. */
  get unavailable(): ReadonlyMap<string, Unavailable> {
    return this.refused;
  }

  /** Closes namespaces unused for `idleMs` that no request is using; answers how many. */
  closeIdle(idleMs: number): number {
    if (!this.init.storage.closesWhenIdle) return 0;
    const now = this.init.clock.monotonic();
    let closed = 0;
    for (const [name, service] of this.open) {
      if (!service.usage.idleFor(idleMs, now)) continue;
      this.forget(name);
      this.close(service, true);
      closed++;
    }
    return closed;
  }

  /**
   * Takes a service out of use after its engine or database failed: the next request opens the
   * namespace afresh. It is closed once no request uses it (see `released`).
   */
  retire(service: NamespaceService, damaged: boolean): void {
    if (this.open.get(service.namespace) === service) this.forget(service.namespace);
    service.usage.retire(damaged);
    if (!service.usage.inUse) this.close(service);
  }

  /**
   * Closes the namespace once no request uses it, for another host of the same files to open it
   * next (a worker of the Node host taking it over). Its caller sends it no request meanwhile and
   * has closed its sockets.
   */
  async release(name: string): Promise<void> {
    await this.opening.get(name)?.catch(() => {});
    const service = this.open.get(name);
    if (!service) return;
    // An ingest pass under way stops at its next step; the next host goes on from there.
    service.stopIngest();
    while (service.usage.inUse) await new Promise((resolve) => setTimeout(resolve, RELEASE_POLL_MS));
    if (this.open.get(name) !== service) return;
    this.forget(name);
    this.close(service);
  }

  /** A request is done with the service. */
  released(service: NamespaceService): void {
    if (service.usage.retired && !service.usage.inUse) this.close(service);
  }

  /** Notes a refused namespace; the first refusal is logged with the store's location and error. */
  refuse(name: string, hash: string, error: NamespaceUnavailableError): void {
    if (this.refused.has(name)) return;
    this.refused.set(name, { reason: error.reason, since: this.init.clock.now() });
    this.init.logger.log("error", {
      msg: "namespace unavailable",
      ns: hash,
      reason: error.reason,
      ...(error.location === undefined ? {} : { file: error.location }),
      error: error.detail,
    });
  }

  /** Every open namespace's service. */
  services(): IterableIterator<NamespaceService> {
    return this.open.values();
  }

  /** Waits for namespaces being opened, then closes every open one. */
  async closeAll(): Promise<void> {
    while (this.opening.size > 0) await Promise.allSettled([...this.opening.values()]);
    for (const service of this.open.values()) this.close(service);
    this.open.clear();
    this.openedBy.clear();
  }

  private async openNamespace(name: string, context: AcquireContext): Promise<NamespaceService> {
    const { storage } = this.init;
    if (context.admitCreation && storage.exists && !(await storage.exists(name)))
      await context.admitCreation();
    if (context.creator !== undefined) this.makeRoomFor(context.creator);
    this.makeRoom();
    const store = await storage.open(name, context.creator === undefined ? {} : { creator: context.creator });
    let service: NamespaceService;
    try {
      service = await this.init.serve(name, store);
    } catch (error) {
      const damaged = storageFailure(error) === "corrupt";
      store.close(damaged ? { damaged } : {});
      if (damaged) {
        throw new NamespaceUnavailableError("corrupt", (error as Error).message, store.location);
      }
      throw error;
    }
    if (this.committedWhileClosed.delete(name)) service.upstreamCommittedWhileClosed();
    this.open.set(name, service);
    if (context.creator !== undefined) this.openedBy.set(name, context.creator);
    if (this.refused.delete(name)) {
      this.init.logger.log("info", { msg: "namespace available again", ns: service.hash });
    }
    return service;
  }

  /** At the cap, closes the least recently used namespace no request is using. */
  private makeRoom(): void {
    if (this.open.size < this.init.maxOpen) return;
    let idlest: NamespaceService | undefined;
    for (const service of this.open.values()) {
      if (!service.usage.inUse && (!idlest || service.usage.lastUsed < idlest.usage.lastUsed))
        idlest = service;
    }
    if (!idlest) {
      throw new HttpError(
        "server_busy",
        "this server has as many namespaces open as it may, each serving a request; retry shortly",
        { "retry-after": "1" },
      );
    }
    this.forget(idlest.namespace);
    this.close(idlest, true);
  }

  /**
   * When the user holds their share of the slots (`userShareOfOpen`), closes their least recently
   * used namespace no request is using; refuses them (503) when every one of theirs is in use.
   */
  private makeRoomFor(user: string): void {
    const share = userShareOfOpen(this.init.maxOpen);
    if (share >= this.init.maxOpen) return;
    let held = 0;
    let idlest: NamespaceService | undefined;
    for (const [name, opener] of this.openedBy) {
      if (opener !== user) continue;
      held++;
      const service = this.open.get(name)!;
      if (!service.usage.inUse && (!idlest || service.usage.lastUsed < idlest.usage.lastUsed))
        idlest = service;
    }
    if (held < share) return;
    if (!idlest) {
      throw new HttpError(
        "server_busy",
        `this user has ${held} namespaces open, as many as one user may hold at once (a quarter of ` +
          "the server's maxOpenNamespaces), each serving a request; retry shortly",
        { "retry-after": "1" },
      );
    }
    this.forget(idlest.namespace);
    this.close(idlest, true);
  }

  private forget(name: string): void {
    this.open.delete(name);
    this.openedBy.delete(name);
  }

  /** `evicted`: closed while healthy, to free its slot (its sockets may bring it back). */
  private close(service: NamespaceService, evicted = false): void {
    try {
      service.close(service.usage.retired?.damaged ?? false, evicted);
    } catch (error) {
      this.init.logger.log("error", {
        msg: "closing a namespace failed",
        ns: service.hash,
        error: String(error),
      });
    }
  }
}
