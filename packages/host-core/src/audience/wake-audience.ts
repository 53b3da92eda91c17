/**
 * Whom a span of commits concerns, as the namespace found it: everyone (an operator's change, a
 * reset, visibility off), or the members whose subscription admits what changed: by table, by
 * the keys each probe found, by the predicates that passed, and the writing users.
 */
export interface WakeAudience {
  everyone: boolean;
  tables: ReadonlySet<string>;
  /** By probe id (`termProbe`): the keys the changed rows' images hold. */
  keys: ReadonlyMap<string, ReadonlySet<string>>;
  /** The ids of the predicate probes some changed row's image passed. */
  passed: ReadonlySet<string>;
  /** Users whose every socket is woken: the writers' (their other tabs learn their ids). */
  users: ReadonlySet<string>;
}

export const EVERYONE: WakeAudience = {
  everyone: true,
  tables: new Set(),
  keys: new Map(),
  passed: new Set(),
  users: new Set(),
};
