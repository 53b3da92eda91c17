import type {
  QueryPatchOperation,
  ZeroMutationsPatchOp,
  ZeroPokePartBody,
  ZeroPokeQueryOp,
  ZeroQueryOp,
} from "@weir/protocol";
import type { ZeroCookie } from "./zero-cookie.js";
import { DesiredRows } from "./zero-desired-rows.js";
import { ZeroEnginePatch } from "./zero-engine-patch.js";
import type { ZeroGroupChanges } from "./zero-group-store.js";
import { type MutationResult, MutationResults } from "./zero-mutation-results.js";

/** A desired query as a client named it. */
export interface DesiredQuery {
  name: string;
  args: unknown;
}

/** What a poke carries besides the engine's answer. */
export interface PokeContent {
  desired: Record<string, ZeroPokeQueryOp[]>;
  results: ZeroMutationsPatchOp[];
}

/** A poke's part as the server computes it: the pokeID is the connection's. */
export type ZeroPokePart = Omit<ZeroPokePartBody, "pokeID">;

/**
 * Holds, after a restart, the queries the engine stored for the group that no client is known to
 * desire (stored before each client's desires were, or left by a crash between the two): they
 * stay active until a client lets go of one. Never told to a client as its own.
 */
const UNCLAIMED = "";

/**
 * What the server knows of one client group's view: the cookie all its connections are at, each
 * client's desired queries, the queries the clients hold as got, and what the next poke must
 * carry. The engine keeps the group's active queries and row membership; a query stays active
 * while any client of the group desires it. Which client desires which query is stored too
 * (ZeroGroupStore), written with the poke that applies a change, with the mutation results
 * not yet acknowledged.
 */
export class ZeroGroup {
  /** The cookie of the group's last poke (null: none was sent since the server started). */
  cookie: ZeroCookie | null = null;
  /** The hashes the clients hold in gotQueries. */
  got = new Set<string>();
  /**
   * The group's last incremental poke, from the cookie before it (kept while small): a client
   * whose socket dropped as it went out comes back at `from`, and gets it again instead of a
   * reset.
   */
  lastPoke: { from: ZeroCookie; parts: ZeroPokePart[]; to: ZeroCookie } | null = null;
  /** Whether the next poke must be a full one (clear, then everything). */
  reset = true;
  /**
   * The clients are behind the group's last pokes (back with an older cookie): the next poke
   * names every query desired and got, and every result, again, as they may have missed any.
   */
  behind = false;
  /** A push of the group is running: its poke waits for the push's results. */
  pushing = false;
  private readonly desired = new Map<string, Map<string, DesiredQuery>>();
  private readonly enginePatch = new ZeroEnginePatch();
  private desiredEcho = new Map<string, ZeroPokeQueryOp[]>();
  private readonly results = new MutationResults();
  /** Results acknowledged, and clients gone, since the group was last stored. */
  private acknowledgedSince: Array<{ clientID: string; id: number }> = [];
  private forgottenSince: string[] = [];
  /** How clients' desired queries changed since they were last stored. */
  private readonly desiredRows = new DesiredRows();

  constructor(
    readonly id: string,
    readonly userID: string,
  ) {}

  /**
   * Rebuilds the group (after a restart) from what it stored: each client's desired queries,
   * from the group's queries the engine stored and the hashes each client was stored to desire,
   * and the results not yet acknowledged, which the next poke puts again.
   */
  restore(
    stored: readonly { hash: string; name: string; args: unknown }[],
    desired: ReadonlyMap<string, readonly string[]>,
    results: readonly MutationResult[],
  ): void {
    const byHash = new Map(stored.map(({ hash, name, args }) => [hash, { name, args }]));
    const claimed = new Set<string>();
    for (const [clientID, hashes] of desired) {
      const mine = this.clientQueries(clientID);
      for (const hash of hashes) {
        const query = byHash.get(hash);
        if (!query) continue;
        mine.set(hash, query);
        claimed.add(hash);
      }
    }
    for (const [hash, query] of byHash)
      if (!claimed.has(hash)) this.clientQueries(UNCLAIMED).set(hash, query);
    for (const result of results) this.results.add(result);
  }

  /** What changed since the group was last stored (null: nothing), for the store to write. */
  takeStoreChanges(): ZeroGroupChanges | null {
    const desired = this.desiredRows.take();
    if (desired === null && this.acknowledgedSince.length === 0 && this.forgottenSince.length === 0)
      return null;
    const changes = { desired, acknowledged: this.acknowledgedSince, forgotten: this.forgottenSince };
    this.acknowledgedSince = [];
    this.forgottenSince = [];
    return changes;
  }

  /** The changes taken were not stored after all: the next poke stores them. */
  restoreStoreChanges(changes: ZeroGroupChanges): void {
    if (changes.desired) this.desiredRows.restore(changes.desired);
    this.acknowledgedSince = [...changes.acknowledged, ...this.acknowledgedSince];
    this.forgottenSince = [...changes.forgotten, ...this.forgottenSince];
  }

  /** The group goes on from `cookie`, where its clients are, behind its last pokes. */
  catchUp(cookie: ZeroCookie): void {
    this.cookie = cookie;
    this.got.clear();
    this.behind = true;
    this.lastPoke = null;
  }

  /** A client's change to its desired queries; puts must name a query (checked by the caller). */
  desire(clientID: string, ops: readonly ZeroQueryOp[]): void {
    const mine = this.clientQueries(clientID);
    for (const op of ops) {
      if (op.op === "clear") {
        for (const hash of [...mine.keys()]) this.undesire(clientID, mine, hash);
        this.echo(clientID, { op: "clear" });
        continue;
      }
      if (op.op === "del") {
        if (mine.has(op.hash)) this.undesire(clientID, mine, op.hash);
        else this.release(clientID, op.hash);
        continue;
      }
      const args = op.args === undefined || op.args.length === 0 ? null : op.args[0];
      const wanted = this.wanted(op.hash);
      const added = !mine.has(op.hash) && clientID !== UNCLAIMED;
      mine.set(op.hash, { name: op.name!, args });
      this.echo(clientID, { op: "put", hash: op.hash });
      if (!wanted && !this.cancelPending("del", op.hash))
        this.enginePatch.push({ op: "put", hash: op.hash, name: op.name!, args });
      // A client's put is stored with the pull that sends its query to the engine: a flood of
      // puts the group's caps refuse is never written.
      if (added) this.desiredRows.added(clientID, op.hash, this.enginePatch.hasPut(op.hash));
    }
  }

  /**
   * Drops the engine patch's pending `op` of `hash`, which the opposite op cancels: a query
   * deleted and put again before the next pull stays as the engine holds it, and one put and
   * deleted again never reaches it (a flood of toggles costs no evaluation). Answers whether one
   * was pending.
   */
  private cancelPending(op: "put" | "del", hash: string): boolean {
    return this.enginePatch.cancel(op, hash);
  }

  /** The clients leave the group: their desired queries go. */
  forgetClients(clientIDs: readonly string[]): void {
    for (const clientID of clientIDs) {
      const mine = this.desired.get(clientID);
      if (mine) for (const hash of [...mine.keys()]) this.undesire(clientID, mine, hash);
      this.desired.delete(clientID);
      this.desiredEcho.delete(clientID);
      this.results.forget([clientID]);
      this.forgottenSince.push(clientID);
    }
  }

  /** A mutation's application error, for the next poke (the caller has stored it). */
  refused(result: MutationResult): void {
    this.results.add(result);
  }

  /** The client has seen its results up to `id`: the next poke deletes them. */
  acknowledged(clientID: string, id: number): void {
    this.results.acknowledged(clientID, id);
    this.acknowledgedSince.push({ clientID, id });
  }

  /** Drops puts from the engine's pending patch (their queries were refused). */
  dropPuts(hashes: ReadonlySet<string>): void {
    this.enginePatch.reset(this.enginePatch.all().filter((op) => op.op !== "put" || !hashes.has(op.hash)));
    for (const [clientID, mine] of this.desired) {
      for (const hash of hashes) {
        if (!mine.delete(hash) || clientID === UNCLAIMED) continue;
        this.desiredRows.removed(clientID, hash);
        this.echo(clientID, { op: "del", hash });
      }
    }
  }

  /**
   * Takes the pending puts up to the first pending del (none after it: a del may make room), for
   * the group's caps refused the puts before them: the client hears of them all in one answer
   * instead of one refused pull per slice. Their clients desire them no more (`dropPuts`).
   */
  takeCappedPuts(): { hash: string; name: string }[] {
    const patch = this.enginePatch.all();
    const end = patch.findIndex((op) => op.op !== "put");
    const taken = end < 0 ? patch : patch.slice(0, end);
    const puts = taken.flatMap((op) => (op.op === "put" ? [{ hash: op.hash, name: op.name }] : []));
    this.dropPuts(new Set(puts.map((put) => put.hash)));
    return puts;
  }

  /**
   * Whether the next pull has nothing of the group's own to carry: no query change for the
   * engine, nothing for the store to write.
   */
  settled(): boolean {
    return (
      this.enginePatch.length === 0 &&
      this.desiredRows.size === 0 &&
      this.acknowledgedSince.length === 0 &&
      this.forgottenSince.length === 0
    );
  }

  /** Whether the clients hold every query some client of the group desires as got. */
  gotEvery(): boolean {
    for (const mine of this.desired.values())
      for (const hash of mine.keys()) if (!this.got.has(hash)) return false;
    return true;
  }

  /** The hashes of the queries some client of the group desires, sorted. */
  activeHashes(): string[] {
    const hashes = new Set<string>();
    for (const mine of this.desired.values()) for (const hash of mine.keys()) hashes.add(hash);
    return [...hashes].sort();
  }

  /** The engine patch waiting for the next pull. */
  pendingPuts(): { hash: string; name: string }[] {
    const puts: { hash: string; name: string }[] = [];
    for (const op of this.enginePatch.all()) if (op.op === "put") puts.push({ hash: op.hash, name: op.name });
    return puts;
  }

  /**
   * Takes the query patch the next pull sends to the engine: its operations up to the
   * `maxPuts`-th put; the rest wait for the pull after (`hasPendingPatch`).
   */
  takeEnginePatch(maxPuts = Number.POSITIVE_INFINITY): QueryPatchOperation[] {
    const patch = this.enginePatch.take(maxPuts);
    for (const op of patch) if (op.op === "put") this.desiredRows.sent(op.hash);
    return patch;
  }

  /** Operations of the engine patch wait for a pull (more puts than one poke takes). */
  hasPendingPatch(): boolean {
    return this.enginePatch.length > 0;
  }

  /** Puts back a patch whose pull failed, so the next one sends it. */
  restoreEnginePatch(patch: readonly QueryPatchOperation[]): void {
    this.enginePatch.reset([...patch, ...this.enginePatch.all()]);
  }

  /**
   * Takes the rest of what the next poke carries: the desired-query changes to echo (after a
   * clear, every client's whole set) and the mutation results (after a clear, every one not yet
   * acknowledged).
   */
  takeContent(full: boolean): PokeContent {
    const desired: Record<string, ZeroPokeQueryOp[]> = {};
    if (full) {
      for (const [clientID, mine] of this.desired) {
        if (clientID !== UNCLAIMED && mine.size > 0)
          desired[clientID] = [...mine.keys()].map((hash) => ({ op: "put", hash }));
      }
    } else {
      for (const [clientID, ops] of this.desiredEcho) if (ops.length > 0) desired[clientID] = ops;
    }
    this.desiredEcho = new Map();
    return { desired, results: this.results.take(full) };
  }

  private clientQueries(clientID: string): Map<string, DesiredQuery> {
    let mine = this.desired.get(clientID);
    if (!mine) {
      mine = new Map();
      this.desired.set(clientID, mine);
    }
    return mine;
  }

  private undesire(clientID: string, mine: Map<string, DesiredQuery>, hash: string): void {
    mine.delete(hash);
    if (clientID !== UNCLAIMED) this.desiredRows.removed(clientID, hash);
    this.echo(clientID, { op: "del", hash });
    if (!this.wanted(hash) && !this.cancelPending("put", hash)) this.enginePatch.push({ op: "del", hash });
  }

  /** A client lets go of a query it was not known to desire: an unclaimed one goes. */
  private release(clientID: string, hash: string): void {
    const unclaimed = this.desired.get(UNCLAIMED);
    if (!unclaimed?.delete(hash)) return;
    this.echo(clientID, { op: "del", hash });
    if (!this.wanted(hash) && !this.cancelPending("put", hash)) this.enginePatch.push({ op: "del", hash });
  }

  private wanted(hash: string): boolean {
    for (const mine of this.desired.values()) if (mine.has(hash)) return true;
    return false;
  }

  private echo(clientID: string, op: ZeroPokeQueryOp): void {
    const ops = this.desiredEcho.get(clientID) ?? [];
    ops.push(op);
    this.desiredEcho.set(clientID, ops);
  }
}
