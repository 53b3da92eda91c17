// What a pull answers, as its parts plan it (pull.ts puts the answer together).
export class PullPlan {
  cookie: i64 = 0;
  reset: bool = false;
  included: i64 = 0;
  lastMutationIDs: i32 = 0;
  patch: string = "";
  evaluated: i64 = 0;
  recomputed: i64 = 0;
  copied: i64 = 0;
  /** A query-aware answer left rows owed. */
  more: bool = false;
  /** The followers that took the answer (query/follow.ts), and the length of its ids' JSON. */
  followed: string = "";
  idsLength: i32 = 0;
}
