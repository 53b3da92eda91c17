import type { AudienceProbe } from "@weir/engine-wasm";
import { type Subscription, termProbe } from "./subscription.js";
import type { WakeAudience } from "./wake-audience.js";

/**
 * Members (wake sockets, Zero groups) indexed by what they must be woken for, so that choosing
 * whom a commit concerns costs what it finds (the keys it changed, the members they name), never
 * a walk over every member. The probes of its members' filters are kept with a count each.
 */
export class AudienceIndex<T> {
  private readonly members = new Map<T, Subscription>();
  /** Members woken by every change (no filters, or unreadable ones). */
  private readonly everything = new Set<T>();
  /** By table: members with a term of it that cannot be narrowed. */
  private readonly byTable = new Map<string, Set<T>>();
  /** By probe id, then key. */
  private readonly byKey = new Map<string, Map<string, Set<T>>>();
  private readonly byPredicate = new Map<string, Set<T>>();
  private readonly byUser = new Map<string, Set<T>>();
  private readonly probeRefs = new Map<string, { probe: AudienceProbe; refs: number }>();

  get size(): number {
    return this.members.size;
  }

  all(): IterableIterator<T> {
    return this.members.keys();
  }

  has(member: T): boolean {
    return this.members.has(member);
  }

  add(member: T, subscription: Subscription): void {
    if (this.members.has(member)) this.remove(member);
    this.members.set(member, subscription);
    setOf(this.byUser, subscription.userID).add(member);
    if (subscription.terms === null) {
      this.everything.add(member);
      return;
    }
    for (const term of subscription.terms) {
      const probed = termProbe(term);
      if (probed === null) {
        setOf(this.byTable, term.table).add(member);
        continue;
      }
      const known = this.probeRefs.get(probed.id);
      if (known) known.refs++;
      else this.probeRefs.set(probed.id, { probe: probed.probe, refs: 1 });
      if (term.kind === "key") {
        let keys = this.byKey.get(probed.id);
        if (!keys) {
          keys = new Map();
          this.byKey.set(probed.id, keys);
        }
        setOf(keys, term.key).add(member);
      } else setOf(this.byPredicate, probed.id).add(member);
    }
  }

  remove(member: T): void {
    const subscription = this.members.get(member);
    if (!subscription) return;
    this.members.delete(member);
    unset(this.byUser, subscription.userID, member);
    if (subscription.terms === null) {
      this.everything.delete(member);
      return;
    }
    for (const term of subscription.terms) {
      const probed = termProbe(term);
      if (probed === null) {
        unset(this.byTable, term.table, member);
        continue;
      }
      const known = this.probeRefs.get(probed.id)!;
      if (--known.refs === 0) this.probeRefs.delete(probed.id);
      if (term.kind === "key") {
        const keys = this.byKey.get(probed.id)!;
        unset(keys, term.key, member);
        if (keys.size === 0) this.byKey.delete(probed.id);
      } else unset(this.byPredicate, probed.id, member);
    }
  }

  /** The probes the members' filters need answered about a commit, by id. */
  probes(into = new Map<string, AudienceProbe>()): Map<string, AudienceProbe> {
    for (const [id, { probe }] of this.probeRefs) into.set(id, probe);
    return into;
  }

  /** The members the audience admits. */
  select(audience: WakeAudience): Set<T> {
    if (audience.everyone) return new Set(this.members.keys());
    const chosen = new Set<T>();
    const take = (members: Iterable<T> | undefined) => {
      if (members) for (const member of members) chosen.add(member);
    };
    for (const user of audience.users) take(this.byUser.get(user));
    if (audience.tables.size > 0) take(this.everything);
    for (const table of audience.tables) take(this.byTable.get(table));
    for (const [id, keys] of audience.keys) {
      const members = this.byKey.get(id);
      if (members) for (const key of keys) take(members.get(key));
    }
    for (const id of audience.passed) take(this.byPredicate.get(id));
    return chosen;
  }

  /** Whether the audience admits this member (a look at its own subscription only). */
  admits(member: T, audience: WakeAudience): boolean {
    if (audience.everyone) return true;
    const subscription = this.members.get(member);
    if (!subscription) return false;
    if (audience.users.has(subscription.userID)) return true;
    if (subscription.terms === null) return audience.tables.size > 0;
    return subscription.terms.some((term) => {
      if (!audience.tables.has(term.table)) return false;
      const probed = termProbe(term);
      if (probed === null) return true;
      if (term.kind === "key") return audience.keys.get(probed.id)?.has(term.key) ?? false;
      return audience.passed.has(probed.id);
    });
  }
}

function setOf<K, T>(map: Map<K, Set<T>>, key: K): Set<T> {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  return set;
}

function unset<K, T>(map: Map<K, Set<T>>, key: K, member: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(member);
  if (set.size === 0) map.delete(key);
}
