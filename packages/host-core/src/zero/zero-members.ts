import type { AudienceProbe } from "@weir/engine-wasm";
import { AudienceIndex } from "../audience/audience-index.js";
import type { WakeAudience } from "../audience/wake-audience.js";
import type { Claims } from "../auth/claims.js";
import type { ZeroConnection } from "./zero-connection.js";
import { sameCookie } from "./zero-delivery.js";
import type { ZeroGroup } from "./zero-group.js";
import type { ZeroNamespace } from "./zero-namespace.js";

/**
 * A namespace's open Zero connections, by client group: which groups a commit concerns (the
 * audience each group's subscription was read from), which are owed rows, and which a poke goes to.
 */
export class ZeroMembers {
  private readonly members = new Map<ZeroGroup, Set<ZeroConnection>>();
  /** The groups with connections, by what their visibility must be poked for. */
  private readonly audience = new AudienceIndex<ZeroGroup>();
  /** The claims each group's subscription was read from (a new credential may change them). */
  private readonly subscribedAs = new Map<ZeroGroup, Claims>();
  /** Groups whose last poke left rows owed (a part of an answer): poked again after any commit, besides the poke that follows the part. */
  readonly owing = new Set<ZeroGroup>();

  constructor(private readonly ns: ZeroNamespace) {}

  /** How many connections are open. */
  get size(): number {
    let size = 0;
    for (const set of this.members.values()) size += set.size;
    return size;
  }

  /** How many groups have a connection. */
  get groupCount(): number {
    return this.members.size;
  }

  /** The groups with a connection. */
  groups(): IterableIterator<ZeroGroup> {
    return this.members.keys();
  }

  has(group: ZeroGroup): boolean {
    return this.members.has(group);
  }

  /** Every open connection. */
  connections(): ZeroConnection[] {
    return [...this.members.values()].flatMap((set) => [...set]);
  }

  /** The probes the groups' filters need answered about a commit, added to `into`. */
  probes(into: Map<string, AudienceProbe>): Map<string, AudienceProbe> {
    return this.audience.probes(into);
  }

  /** The groups the audience admits. */
  select(audience: WakeAudience): Iterable<ZeroGroup> {
    return this.audience.select(audience);
  }

  join(connection: ZeroConnection): void {
    let members = this.members.get(connection.group);
    if (!members) {
      members = new Set();
      this.members.set(connection.group, members);
    }
    members.add(connection);
    this.subscribe(connection.group, connection.claims);
  }

  /** The connection leaves; true when its group has no connection left. */
  leave(connection: ZeroConnection): boolean {
    const members = this.members.get(connection.group);
    if (!members?.delete(connection)) return false;
    if (members.size > 0) return false;
    this.members.delete(connection.group);
    this.audience.remove(connection.group);
    this.subscribedAs.delete(connection.group);
    this.owing.delete(connection.group);
    return true;
  }

  /** Makes the connection its group's newest (the one whose claims its pokes are pulled with). */
  promote(connection: ZeroConnection): void {
    const set = this.members.get(connection.group);
    if (set?.delete(connection)) set.add(connection);
  }

  /** The group's connections a poke goes to: open, and past their first message. */
  pokeable(group: ZeroGroup): ZeroConnection[] {
    return [...(this.members.get(group) ?? [])].filter((c) => c.isOpen && c.initialized);
  }

  /** Indexes the group by the claims its pokes are pulled with (those of its newest connection). */
  subscribe(group: ZeroGroup, claims: Claims): void {
    if (this.subscribedAs.get(group) === claims) return;
    this.subscribedAs.set(group, claims);
    this.audience.add(group, this.ns.subscriptionFor(claims));
  }

  /** Whether the group's queries are all complete; if not, rows are owed to it. */
  noteOwed(group: ZeroGroup): void {
    if (group.gotEvery()) this.owing.delete(group);
    else this.owing.add(group);
  }

  /**
   * What groups share when their pulls would answer alike: the same user and claims, the same
   * cookie at every connection, the same active queries, and nothing of their own to send the
   * engine or the store (a query change, a pending store write, a reset). Null: the group pulls
   * alone. The engine checks the state itself; this only finds the groups worth asking about.
   */
  shareKey(group: ZeroGroup): string | null {
    const connections = this.pokeable(group);
    if (connections.length === 0 || group.reset || group.cookie === null || !group.settled()) return null;
    if (connections.some((c) => !sameCookie(c.cookie, group.cookie))) return null;
    const claims = connections[connections.length - 1]!.claims;
    return JSON.stringify([group.userID, group.cookie.version, claims, group.activeHashes()]);
  }
}
