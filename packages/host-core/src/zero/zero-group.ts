import type { QueryPatchOperation } from "@weir/protocol";
import type { ZeroCookie } from "./zero-cookie.js";
import type { ZeroQueryOp } from "./zero-messages.js";

/** A desired query as a client named it. */
export interface DesiredQuery {
  name: string;
  args: unknown;
}

/** A `mutationsPatch` entry of Zero's pokes. */
export type MutationsPatchOp =
  | { op: "put"; mutation: { id: { clientID: string; id: number }; result: unknown } }
  | { op: "del"; id: { clientID: string; id: number } };

/** What a poke carries besides the engine's answer. */
export interface PokeContent {
  desired: Record<string, PokeQueryOp[]>;
  results: MutationsPatchOp[];
}

/** A queries patch op as pokes carry it (desiredQueriesPatches, gotQueriesPatch). */
export type PokeQueryOp = { op: "put"; hash: string } | { op: "del"; hash: string } | { op: "clear" };

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
 * (ZeroDesiredStore), written with the poke that applies a change.
 */
export class ZeroGroup {
  /** The cookie of the group's last poke (null: none was sent since the server started). */
  cookie: ZeroCookie | null = null;
  /** The hashes the clients hold in gotQueries. */
  got = new Set<string>();
  /** Whether the next poke must be a full one (clear, then everything). */
  reset = true;
  /** A push of the group is running: its poke waits for the push's results. */
  pushing = false;
  private readonly desired = new Map<string, Map<string, DesiredQuery>>();
  private enginePatch: QueryPatchOperation[] = [];
  private desiredEcho = new Map<string, PokeQueryOp[]>();
  private results: MutationsPatchOp[] = [];
  /** App errors sent to each client and not yet acknowledged. */
  private readonly unacked = new Map<string, number[]>();

  constructor(
    readonly id: string,
    readonly userID: string,
  ) {}

  /** Clients' desired queries changed since they were last stored. */
  private desiredChanged = false;

  /**
   * Rebuilds each client's desired queries (after a restart) from the group's queries the engine
   * stored and the hashes each client was stored to desire.
   */
  restoreDesired(
    stored: readonly { hash: string; name: string; args: unknown }[],
    desired: ReadonlyMap<string, readonly string[]>,
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
  }

  /** Each client's desired hashes, when they changed since this was last taken (else null). */
  takeDesiredChange(): Map<string, string[]> | null {
    if (!this.desiredChanged) return null;
    this.desiredChanged = false;
    const desired = new Map<string, string[]>();
    for (const [clientID, mine] of this.desired) {
      if (clientID !== UNCLAIMED && mine.size > 0) desired.set(clientID, [...mine.keys()]);
    }
    return desired;
  }

  /** The change taken was not stored after all: the next poke stores it. */
  restoreDesiredChange(): void {
    this.desiredChanged = true;
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
      mine.set(op.hash, { name: op.name!, args });
      this.desiredChanged = true;
      this.echo(clientID, { op: "put", hash: op.hash });
      if (!wanted) this.enginePatch.push({ op: "put", hash: op.hash, name: op.name!, args });
    }
  }

  /** The clients leave the group: their desired queries go. */
  forgetClients(clientIDs: readonly string[]): void {
    for (const clientID of clientIDs) {
      const mine = this.desired.get(clientID);
      if (mine) for (const hash of [...mine.keys()]) this.undesire(clientID, mine, hash);
      if (this.desired.delete(clientID)) this.desiredChanged = true;
      this.desiredEcho.delete(clientID);
      this.unacked.delete(clientID);
    }
  }

  /** A mutation's application error, for the next poke. */
  refused(clientID: string, id: number, result: unknown): void {
    this.results.push({ op: "put", mutation: { id: { clientID, id }, result } });
    const list = this.unacked.get(clientID) ?? [];
    list.push(id);
    this.unacked.set(clientID, list);
  }

  /** The client has seen its results up to `id`: the next poke deletes them. */
  acknowledged(clientID: string, id: number): void {
    const list = this.unacked.get(clientID);
    if (!list) return;
    const kept: number[] = [];
    for (const mutationID of list) {
      if (mutationID <= id) this.results.push({ op: "del", id: { clientID, id: mutationID } });
      else kept.push(mutationID);
    }
    this.unacked.set(clientID, kept);
  }

  /** Drops puts from the engine's pending patch (their queries were refused). */
  dropPuts(hashes: ReadonlySet<string>): void {
    this.enginePatch = this.enginePatch.filter((op) => op.op !== "put" || !hashes.has(op.hash));
    for (const [clientID, mine] of this.desired) {
      for (const hash of hashes) {
        if (!mine.delete(hash)) continue;
        this.desiredChanged = true;
        if (clientID !== UNCLAIMED) this.echo(clientID, { op: "del", hash });
      }
    }
  }

  /** The engine patch waiting for the next pull. */
  pendingPuts(): { hash: string; name: string }[] {
    const puts: { hash: string; name: string }[] = [];
    for (const op of this.enginePatch) if (op.op === "put") puts.push({ hash: op.hash, name: op.name });
    return puts;
  }

  /** Takes the query patch the next pull sends to the engine. */
  takeEnginePatch(): QueryPatchOperation[] {
    const patch = this.enginePatch;
    this.enginePatch = [];
    return patch;
  }

  /** Puts back a patch whose pull failed, so the next one sends it. */
  restoreEnginePatch(patch: readonly QueryPatchOperation[]): void {
    this.enginePatch = [...patch, ...this.enginePatch];
  }

  /**
   * Takes the rest of what the next poke carries: the desired-query changes to echo (after a
   * clear, every client's whole set) and the mutation results.
   */
  takeContent(full: boolean): PokeContent {
    const desired: Record<string, PokeQueryOp[]> = {};
    if (full) {
      for (const [clientID, mine] of this.desired) {
        if (clientID !== UNCLAIMED && mine.size > 0)
          desired[clientID] = [...mine.keys()].map((hash) => ({ op: "put", hash }));
      }
    } else {
      for (const [clientID, ops] of this.desiredEcho) if (ops.length > 0) desired[clientID] = ops;
    }
    const taken = { desired, results: this.results };
    this.desiredEcho = new Map();
    this.results = [];
    return taken;
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
    this.desiredChanged = true;
    this.echo(clientID, { op: "del", hash });
    if (!this.wanted(hash)) this.enginePatch.push({ op: "del", hash });
  }

  /** A client lets go of a query it was not known to desire: an unclaimed one goes. */
  private release(clientID: string, hash: string): void {
    const unclaimed = this.desired.get(UNCLAIMED);
    if (!unclaimed?.delete(hash)) return;
    this.echo(clientID, { op: "del", hash });
    if (!this.wanted(hash)) this.enginePatch.push({ op: "del", hash });
  }

  private wanted(hash: string): boolean {
    for (const mine of this.desired.values()) if (mine.has(hash)) return true;
    return false;
  }

  private echo(clientID: string, op: PokeQueryOp): void {
    const ops = this.desiredEcho.get(clientID) ?? [];
    ops.push(op);
    this.desiredEcho.set(clientID, ops);
  }
}
