// A pull of a namespace nothing was installed in yet: answered as the engine answers a namespace
// installed and never written (watermark 0, floor 0, no rows, no clients), without a statement.
import { EngineError } from "../engine-error.js";
import type { PullInput, PullResult, SqlAdapter } from "../types.js";

/** One statement: any table under the reserved prefix means weir was installed here. */
const ANY_WEIR_TABLE = "SELECT 1 FROM sqlite_master WHERE name LIKE '\\_weir\\_%' ESCAPE '\\' LIMIT 1";

/** Whether the database holds nothing of weir's yet (a namespace never written). */
export function isPristine(db: SqlAdapter): boolean {
  return db.query(ANY_WEIR_TABLE, []).length === 0;
}

/** Client groups a pristine database keeps in memory at most; past it a pull installs first. */
const MAX_PRISTINE_GROUPS = 1_000;

/**
 * The client groups pulled from pristine databases, each as its last pull asked: the install
 * registers them (owner and visibility) as those pulls would have, in the install's transaction.
 */
export class PristineGroups {
  private readonly groups = new WeakMap<SqlAdapter, Map<string, PullInput>>();

  /** The answer, or null when the database keeps too many groups already (install, then pull). */
  pull(db: SqlAdapter, input: PullInput): PullResult | null {
    let groups = this.groups.get(db);
    const known = groups?.get(input.clientGroupID);
    if (known && known.userID !== input.userID) {
      throw new EngineError("forbidden", "the client group belongs to another user");
    }
    if (!known && (groups?.size ?? 0) >= MAX_PRISTINE_GROUPS) return null;
    const answer = pristinePull(input);
    if (!groups) {
      groups = new Map();
      this.groups.set(db, groups);
    }
    groups.set(input.clientGroupID, { ...input, cookie: 0 });
    return answer;
  }

  /** The groups pulled from `db` before it was installed, forgotten here. */
  take(db: SqlAdapter): PullInput[] {
    const groups = this.groups.get(db);
    this.groups.delete(db);
    return groups ? [...groups.values()] : [];
  }
}

/**
 * The answer an installed, never-written namespace gives a plain pull (no query patch): a reset
 * to its empty state from no cookie, unchanged at cookie 0, and a cookie ahead of it refused.
 */
function pristinePull(input: PullInput): PullResult {
  if (input.queries) throw new EngineError("internal", "a pull with queries installs the engine first");
  const replicache = input.dialect === "replicache";
  const unchanged = input.cookie === 0;
  if (input.cookie !== null && !unchanged) {
    throw new EngineError(
      "cookie_from_future",
      "the cookie is ahead of this server: drop the local copy and pull again",
    );
  }
  const body = unchanged
    ? replicache
      ? '{"cookie":0,"lastMutationIDChanges":{},"patch":[]}'
      : '{"cookie":0,"unchanged":true}'
    : `{"cookie":0,"lastMutationIDChanges":{},"${replicache ? "patch" : "rowsPatch"}":[{"op":"clear"}]}`;
  return {
    body,
    cookie: 0,
    unchanged,
    reset: !unchanged,
    puts: 0,
    dels: 0,
    lastMutationIDs: 0,
    watermark: 0,
    floor: 0,
    queryRowsExamined: 0,
    queryWork: 0,
    queriesRecomputed: 0,
    queriesCopied: 0,
    more: false,
  };
}
