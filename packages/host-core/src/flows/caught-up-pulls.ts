import type { PullResult } from "@weir/engine-wasm";
import type { Dialect } from "@weir/protocol";
import type { NamespaceStore } from "../ports/storage.js";

const MAX_REMEMBERED_GROUPS = 10_000;

/** What a caught-up pull answers, as the engine rendered it for the current watermark. */
export interface CaughtUpAnswer {
  body: string;
  watermark: number;
  floor: number;
}

/**
 * Answers caught-up pulls from memory: most pulls of a live app find nothing new, and this
 * answer costs no SQL at all. A namespace has one writer (this process, under the file lease, or
 * the Durable Object), so its watermark moves only inside a transaction of this store: every
 * transaction forgets the remembered state, and the next answer from the engine remembers it
 * again. A client group's owner never changes once claimed, so groups stay remembered.
 *
 * A query-aware answer cut by a cap commits a new, empty version and hands it out as its cookie:
 * the watermark is taken from that answer, not from the pull's start, and the group it was cut
 * for is owed rows, so its pulls go to the engine until an answer owes it none.
 */
export class CaughtUpPulls {
  private watermark = -1;
  private floor = 0;
  private readonly bodies: Partial<Record<Dialect, string>> = {};
  private readonly owners = new Map<string, string>();
  /** The visibility identity (`pullVisibilityIdentity`) each group's last answer was under. */
  private readonly visibilities = new Map<string, string>();
  /** Groups an answer cut by a cap left rows owed to; `saturated` once too many were. */
  private readonly owed = new Set<string>();
  private saturated = false;

  /**
   * The answer for a pull at `cookie` under the visibility `identity`, or undefined when the
   * engine must look (a group answered under other claims has its rows recomputed there).
   */
  answer(
    dialect: Dialect,
    clientGroupID: string,
    userID: string,
    cookie: number | null,
    identity: string,
  ): CaughtUpAnswer | undefined {
    if (cookie !== this.watermark) return undefined;
    const body = this.bodies[dialect];
    if (body === undefined || !this.knowsOwner(clientGroupID, userID)) return undefined;
    if (this.visibilities.get(clientGroupID) !== identity) return undefined;
    if (this.saturated || this.owed.has(clientGroupID)) return undefined;
    return { body, watermark: this.watermark, floor: this.floor };
  }

  /**
   * Whether a pull at `cookie` is behind for certain (a null cookie, or one below the watermark
   * remembered): then the engine's caught-up check would only answer that it needs a transaction.
   */
  behind(cookie: number | null): boolean {
    return cookie === null || cookie < this.watermark;
  }

  /** Whether a committed pull or push showed that this user owns the group. */
  knowsOwner(clientGroupID: string, userID: string): boolean {
    return this.owners.get(clientGroupID) === userID;
  }

  /** Learns a group's owner from a committed pull or push. */
  rememberOwner(clientGroupID: string, userID: string): void {
    if (this.owners.size >= MAX_REMEMBERED_GROUPS) this.owners.clear();
    this.owners.set(clientGroupID, userID);
  }

  /**
   * Learns from a pull the engine answered (and committed) for this group and user, under the
   * visibility `identity`.
   */
  remember(
    dialect: Dialect,
    clientGroupID: string,
    userID: string,
    identity: string,
    result: PullResult,
  ): void {
    this.rememberOwner(clientGroupID, userID);
    if (this.visibilities.size >= MAX_REMEMBERED_GROUPS) this.visibilities.clear();
    this.visibilities.set(clientGroupID, identity);
    // Forgetting an owed group would answer it from memory: past the bound, no group is.
    if (!result.more) this.owed.delete(clientGroupID);
    else if (this.owed.size < MAX_REMEMBERED_GROUPS) this.owed.add(clientGroupID);
    else this.saturated = true;
    if (result.watermark !== this.watermark) this.forget();
    this.watermark = result.watermark;
    this.floor = result.floor;
    if (result.unchanged) this.bodies[dialect] = result.body;
  }

  /**
   * A transaction failed to commit after pulls inside it had taught these answers (see
   * NamespaceService.transaction): nothing is answered from memory from now on, as what was
   * learnt is not known to hold. Commits fail rarely (a full disk), and a reopened namespace
   * starts afresh.
   */
  distrust(): void {
    this.forget();
    this.owners.clear();
    this.visibilities.clear();
    this.saturated = true;
  }

  /** Called as any transaction starts: what it writes may move the watermark or the floor. */
  forget(): void {
    this.watermark = -1;
    this.bodies.native = undefined;
    this.bodies.replicache = undefined;
  }

  /** `store`, with every transaction first making these answers forget what they know. */
  forgettingStore(store: NamespaceStore): NamespaceStore {
    return {
      db: store.db,
      transaction: (fn) => {
        this.forget();
        return store.transaction(fn);
      },
      ...(store.sizeBytes ? { sizeBytes: () => store.sizeBytes!() } : {}),
      ...(store.location === undefined ? {} : { location: store.location }),
      close: (outcome) => store.close(outcome),
    };
  }
}
