import { COLUMN_SEPARATOR, TRUE } from "./abi.js";
import { type AudienceProbe, type ChangeAudience, changeAudience } from "./change-audience.js";
import { EngineCore } from "./engine/core.js";
import * as inspect from "./engine/inspect.js";
import * as log from "./engine/log.js";
import { isPristine, PristineGroups } from "./engine/pristine-pull.js";
import * as pulls from "./engine/pull.js";
import * as push from "./engine/push.js";
import * as queries from "./engine/queries.js";
import { namedQueryPlans } from "./engine/query-indexes.js";
import * as upstream from "./engine/upstream.js";
import { checkEngineResult } from "./engine-error.js";
import { instantiateEngine } from "./engine-module.js";
import { checkGroupCaps } from "./group-caps.js";
import { SqlBridge } from "./sql-bridge.js";
import type {
  EngineState,
  HeldRow,
  InstallResult,
  MutationRef,
  NamedQueryShape,
  Preflight,
  PruneResult,
  PullInput,
  PullResult,
  Schema,
  SqlAdapter,
  UpstreamApplyResult,
  UpstreamState,
  Visibility,
} from "./types.js";
import type { TableWrites } from "./upstream-batch.js";

export { DEFAULT_MEMORY_CEILING_BYTES } from "./engine/core.js";
export { DEFAULT_PRUNE_LIMIT } from "./engine/log.js";
export { DEFAULT_MAX_CHANGE_BYTES, DEFAULT_MAX_CHANGE_ROWS, DEFAULT_MAX_QUERY_ROWS } from "./engine/pull.js";
export type { BatchEntry } from "./engine/push.js";

export interface EngineOptions {
  /** Linear memory past which the instance is replaced after a call (default 32 MiB). */
  memoryCeilingBytes?: number;
}

/**
 * weir's sync engine: one WASM instance that can serve any number of namespace databases,
 * one call at a time. Each call takes the namespace's `SqlAdapter`; the host runs calls that
 * write inside its own transaction. Each feature's work is in engine/ (pull, push, upstream,
 * queries, inspect, log); this class is their one facade.
 */
export class Engine {
  readonly version: string;
  /**
   * Whether this module has the query engine (`engine.wasm`), or is the lean one
   * (`engine-lean.wasm`): there, installing named queries, a pull that carries queries, a
   * database that has the query tables and `queryRows` are refused with `queries_disabled`.
   */
  readonly queryEngine: boolean;
  private readonly core: EngineCore;
  private readonly pristineGroups = new PristineGroups();

  private constructor(core: EngineCore) {
    this.core = core;
    this.version = core.wasm.engineVersion();
    this.queryEngine = core.wasm.queryEngine() === 1;
  }

  /**
   * Instantiates the engine from its compiled module (preferred in Workers) or the `.wasm` bytes,
   * of either build: `engine.wasm` or the lean `engine-lean.wasm` (see `queryEngine`).
   */
  static async load(source: WebAssembly.Module | BufferSource, options: EngineOptions = {}): Promise<Engine> {
    const bridge = new SqlBridge();
    return new Engine(
      new EngineCore(await instantiateEngine(source, bridge), bridge, options.memoryCeilingBytes),
    );
  }

  /** How many times the instance was replaced (memory past the ceiling, or a failure). */
  get renewals(): number {
    return this.core.renewals;
  }

  /**
   * Creates the schema's tables, the change capture and the engine's bookkeeping. Installing
   * the same schema again changes nothing; adding tables or nullable columns migrates (every
   * client then resets once); any other change is refused with a `schema_mismatch` error.
   * Then creates the indexes the named queries of `options.queries` need (their correlations,
   * EXISTS conditions and orderings) that the file lacks, as a pull does at a query's first put.
   */
  install(
    db: SqlAdapter,
    schema: Schema,
    options: { queries?: readonly NamedQueryShape[] } = {},
  ): InstallResult {
    const { core } = this;
    const named = namedQueryPlans(schema, options.queries ?? []);
    const answer = core.call(db, named.values, () =>
      checkEngineResult(core.wasm.install({ schema: core.handle(schema), queries: named.text })),
    );
    const [outcome, queryTables] = answer.split(COLUMN_SEPARATOR);
    core.installed.set(db, schema);
    core.queryTables.set(db, queryTables === TRUE);
    // The groups pulled before the install are registered as their pulls would have done.
    for (const pull of this.pristineGroups.take(db)) pulls.answerPull(core, db, pull, false);
    const result: InstallResult = { outcome: outcome as InstallResult["outcome"] };
    if (named.unindexed.length > 0) result.unindexed = named.unindexed;
    return result;
  }

  /** Whether the database holds nothing of weir's yet: a host may then defer `install`. */
  isPristine(db: SqlAdapter): boolean {
    return isPristine(db);
  }

  /**
   * What `pull` answers once the schema is installed on a pristine database, without installing
   * it or reading anything (a plain pull only; a cookie ahead of version 0, or another user's
   * group, is refused alike). The group is kept in memory and registered by `install`, as the
   * pull would have registered it. Null when too many groups wait so: install, then `pull`.
   */
  pullPristine(db: SqlAdapter, input: PullInput): PullResult | null {
    return this.pristineGroups.pull(db, input);
  }

  /** Answers a pull on a database the schema was installed on through this adapter. */
  pull(db: SqlAdapter, input: PullInput): PullResult {
    return pulls.answerPull(this.core, db, input, false)!;
  }

  /**
   * Refuses (`query_budget_exceeded`) a query patch that would take the group past its caps at
   * any put, counting the queries it holds: a host that applies a patch in several pulls checks
   * it with this first, so a patch refused for the caps changes nothing. Reads, writes nothing.
   */
  checkGroupCaps(
    db: SqlAdapter,
    input: Parameters<typeof checkGroupCaps>[2],
    patch: Parameters<typeof checkGroupCaps>[3],
  ): void {
    checkGroupCaps(db, this.core.hasQueryTables(db), input, patch);
  }

  /**
   * Whether pulls on `db` are metered (its driver lets SQL call back into JavaScript:
   * better-sqlite3, sql.js): only there do `queryBudgetMs`, `answerMs` and paging hold.
   */
  metered(db: SqlAdapter): boolean {
    return this.core.meter.attach(db);
  }

  /**
   * The answer to a pull that is caught up (or refused), from one read statement: safe without
   * a transaction. Null when the pull has more to do (changes, a reset, a new client group):
   * then run `pull` in a transaction.
   */
  pullIfCaughtUp(db: SqlAdapter, input: PullInput): PullResult | null {
    // A pull from no cookie, or one that changes its queries, is never caught up: nothing to read.
    if (input.cookie === null || (input.queries?.patch.length ?? 0) > 0) return null;
    return pulls.answerPull(this.core, db, input, true);
  }

  /** Registers the group to the user on first use; refuses another user's group with 403. */
  claimGroup(db: SqlAdapter, clientGroupID: string, userID: string): void {
    push.claimGroup(this.core, db, clientGroupID, userID);
  }

  /** Whether one mutation is next (`apply`), already processed (`replay`) or skips ahead (`ooo`). */
  preflight(db: SqlAdapter, ref: MutationRef): Preflight {
    return push.preflight(this.core, db, ref);
  }

  /**
   * The preflight of each mutation of a push, in order, as if every mutation found next were
   * then processed (applied, or refused by its mutator: its id advances either way). One call
   * for the whole batch.
   */
  preflightBatch(db: SqlAdapter, clientGroupID: string, mutations: readonly push.BatchEntry[]): Preflight[] {
    return push.preflightBatch(this.core, db, clientGroupID, mutations);
  }

  /**
   * Records a processed mutation in the caller's transaction and commits its version: together
   * with the mutator's writes it becomes one new version. Also the way to record an
   * application error, after the host rolled the mutator's writes back.
   */
  finalize(db: SqlAdapter, ref: MutationRef): void {
    push.finalize(this.core, db, ref);
  }

  /**
   * Records the mutations of a push as processed (each client's last id) and commits one
   * version for all of them, in the caller's transaction.
   */
  finalizeBatch(db: SqlAdapter, clientGroupID: string, processed: readonly push.BatchEntry[]): void {
    push.finalizeBatch(this.core, db, clientGroupID, processed);
  }

  /**
   * Keeps the newest `retainChanges` versions: raises the floor and deletes at most `limit`
   * older changes per call; `more` says another call has more to delete.
   */
  prune(db: SqlAdapter, retainChanges: number, limit = log.DEFAULT_PRUNE_LIMIT): PruneResult {
    return log.prune(this.core, db, retainChanges, limit);
  }

  /**
   * Commits what the caller's transaction wrote to the modelled tables outside a push (a host's
   * own writes, an ingest) as one new version, so incremental pulls see it. Nothing pending: no
   * new version (`committed` false).
   */
  commit(db: SqlAdapter): { watermark: number; committed: boolean } {
    return log.commit(this.core, db);
  }

  /** The upstream cursor, the newest fencing token and the snapshot generation in progress. */
  upstreamState(db: SqlAdapter): UpstreamState {
    return upstream.upstreamState(this.core, db);
  }

  /** Takes a new fencing token: an ingester that holds an older one can no longer write. */
  claimFence(db: SqlAdapter): number {
    return upstream.claimFence(this.core, db);
  }

  /**
   * Writes a reduced upstream batch (see `reduceUpstreamBatch`) in the caller's transaction:
   * into the tables, with the cursor moved to `watermark` and one new version when rows changed;
   * or, `into: "snapshot"`, into the staging tables of the generation catching up. A batch at or
   * below the cursor changes nothing (`alreadyApplied`). An older fencing token than the
   * newest claimed is refused (409 `conflict`).
   */
  applyUpstream(
    db: SqlAdapter,
    batch: { watermark: string; tables: readonly TableWrites[] },
    options: { fence: number; into?: "tables" | "snapshot" },
  ): UpstreamApplyResult {
    return upstream.applyUpstream(this.core, db, batch, options);
  }

  /** Starts a snapshot generation at the first page's watermark: empty staging tables. */
  beginSnapshot(db: SqlAdapter, watermark: string, fence: number): UpstreamState {
    return upstream.beginSnapshot(this.core, db, watermark, fence);
  }

  /**
   * Writes a snapshot page (rows in column order, see `snapshotRows`) into the staging table of
   * the table being paged, with its next cursor (null: the table's last page). Answers the rows
   * written.
   */
  applySnapshotPage(
    db: SqlAdapter,
    page: { table: string; rows: readonly unknown[][]; nextCursor: string | null },
    fence: number,
  ): number {
    return upstream.applySnapshotPage(this.core, db, page, fence);
  }

  /**
   * Swaps the caught-up generation's staging tables in, as one new version that resets every
   * client; answers the new cursor (the catch-up's watermark).
   */
  finalizeSnapshot(db: SqlAdapter, fence: number): string {
    return upstream.finalizeSnapshot(this.core, db, fence);
  }

  /**
   * Whom the versions after `since` concern: the tables they changed and, for each probe, the
   * keys (or whether any row) their rows' images before and after each change admit. A span the
   * log no longer holds whole (a raised floor) concerns everyone. Reads only the span's changes.
   */
  changeAudience(db: SqlAdapter, since: number, probes: readonly AudienceProbe[]): ChangeAudience {
    return changeAudience(db, this.core.installedOn(db), since, probes);
  }

  /** Every client resets once, on its next pull. */
  invalidate(db: SqlAdapter): void {
    log.invalidate(this.core, db);
  }

  /**
   * The rows a query AST (of the subset `parseQueryAST` accepts) holds for a caller, evaluated
   * from scratch in one statement: its root rows (node 0) in the query's order, then the rows of
   * its related subqueries (node: the subquery's position in depth-first order, from 1). A `bad_request` names the part of the AST the engine cannot answer.
   */
  queryRows(db: SqlAdapter, ast: unknown, options: { visibility?: Visibility } = {}): HeldRow[] {
    return queries.queryRows(this.core, db, ast, options);
  }

  /**
   * A client group's active queries (hash, name and args as the patch put them) and the query
   * transform version its last query-aware pull stored (null: none).
   */
  groupQueries(db: SqlAdapter, clientGroupID: string): queries.GroupQueries {
    return queries.groupQueries(this.core, db, clientGroupID);
  }

  state(db: SqlAdapter): EngineState {
    return inspect.state(this.core, db, this.version);
  }

  listChanges(
    db: SqlAdapter,
    since: number,
    limit: number,
  ): { version: number; table: string; key: unknown[] }[] {
    return inspect.listChanges(this.core, db, since, limit);
  }

  clients(db: SqlAdapter): inspect.ClientRecord[] {
    return inspect.clients(this.core, db);
  }

  /**
   * The last mutation id of each client of a group that belongs to `userID`, by client id; empty
   * for a group the engine does not know or another user's. Reads that group's clients only.
   */
  groupMutationIDs(db: SqlAdapter, clientGroupID: string, userID: string): Record<string, number> {
    return inspect.groupMutationIDs(this.core, db, clientGroupID, userID);
  }

  /** The size of the engine's WASM linear memory. */
  memoryBytes(): number {
    return this.core.wasm.memoryBytes();
  }
}

export function loadEngine(
  source: WebAssembly.Module | BufferSource,
  options: EngineOptions = {},
): Promise<Engine> {
  return Engine.load(source, options);
}
