import { type Dialect, parseQueryAST } from "@weir/protocol";
import {
  COLUMN_SEPARATOR,
  FORMAT_NATIVE,
  FORMAT_REPLICACHE,
  NEEDS_TRANSACTION,
  NULL_COOKIE,
  PULL_COOKIE,
  PULL_FLOOR,
  PULL_FOLLOWED,
  PULL_IDS_LENGTH,
  PULL_INCLUDED,
  PULL_MORE,
  PULL_MUTATION_IDS,
  PULL_QUERIES_COPIED,
  PULL_QUERIES_RECOMPUTED,
  PULL_QUERY_ROWS_EXAMINED,
  PULL_RESET,
  PULL_UNCHANGED,
  PULL_WATERMARK,
  ROW_SEPARATOR,
  TRUE,
  UPSTREAM_ALREADY_APPLIED,
} from "./abi.js";
import { type AudienceProbe, type ChangeAudience, changeAudience } from "./change-audience.js";
import { checkEngineResult, EngineError } from "./engine-error.js";
import { EngineFailure, type EngineModule, instantiateEngine } from "./engine-module.js";
import { queryPatchText } from "./query-patch.js";
import { queryPlan } from "./query-plan.js";
import { schemaText } from "./schema-text.js";
import { SqlBridge } from "./sql-bridge.js";
import type {
  EngineState,
  FollowedPull,
  HeldRow,
  MutationRef,
  Preflight,
  PreflightStatus,
  PruneResult,
  PullInput,
  PullResult,
  Schema,
  SqlAdapter,
  SqlValue,
  UpstreamApplyResult,
  UpstreamState,
  Visibility,
} from "./types.js";
import type { TableWrites } from "./upstream-batch.js";
import { visibilityIdentity, visibilityText } from "./visibility-text.js";
import { countPuts, splice } from "./wire-text.js";
import { checkPatchCaps, WorkMeter } from "./work-meter.js";

export const DEFAULT_MAX_CHANGE_ROWS = 10_000;
export const DEFAULT_MAX_CHANGE_BYTES = 2_000_000;
/** The rows a query-aware pull's evaluations may produce before it is refused. */
export const DEFAULT_MAX_QUERY_ROWS = 1_000_000;
const FORMATS: Record<Dialect, number> = { native: FORMAT_NATIVE, replicache: FORMAT_REPLICACHE };

/** A mutation of a push batch, within its client group. */
export type BatchEntry = Omit<MutationRef, "clientGroupID">;

export const DEFAULT_PRUNE_LIMIT = 10_000;
const CALLS_PER_COLLECT = 64;
/**
 * Past this much linear memory after a call the instance is replaced: a WebAssembly memory
 * never shrinks, and one large call must not keep its memory for the life of the process.
 * Ordinary calls stay far below it (a 10,000-mutation push needs about 2 MiB).
 */
export const DEFAULT_MEMORY_CEILING_BYTES = 32 * 1024 * 1024;

export interface EngineOptions {
  /** Linear memory past which the instance is replaced after a call (default 32 MiB). */
  memoryCeilingBytes?: number;
}

/**
 * weir's sync engine: one WASM instance that can serve any number of namespace databases,
 * one call at a time. Each call takes the namespace's `SqlAdapter`; the host runs calls that
 * write inside its own transaction.
 */
export class Engine {
  readonly version: string;
  private readonly wasm: EngineModule;
  /** The engine's imports: the current call's database. */
  private readonly bridge: SqlBridge;
  private callsSinceCollect = 0;
  private readonly memoryCeilingBytes: number;
  /** The memory's size after the last collection: a call that grew it is collected after at once. */
  private collectedBytes: number;
  /** Meters query evaluations where the driver lets it (PullInput.queryBudgetMs). */
  private readonly meter = new WorkMeter();
  /** How many times the instance was replaced (memory past the ceiling, or a failure). */
  renewals = 0;
  private readonly schemaHandles = new Map<Schema, number>();
  /** The schema installed on each database (its handle may change when the instance is replaced). */
  private readonly installed = new WeakMap<SqlAdapter, Schema>();

  private constructor(wasm: EngineModule, bridge: SqlBridge, options: EngineOptions) {
    this.wasm = wasm;
    this.bridge = bridge;
    this.version = wasm.engineVersion();
    this.memoryCeilingBytes = options.memoryCeilingBytes ?? DEFAULT_MEMORY_CEILING_BYTES;
    this.collectedBytes = wasm.memoryBytes();
  }

  /** Instantiates the engine from its compiled module (preferred in Workers) or the `.wasm` bytes. */
  static async load(source: WebAssembly.Module | BufferSource, options: EngineOptions = {}): Promise<Engine> {
    const bridge = new SqlBridge();
    return new Engine(await instantiateEngine(source, bridge), bridge, options);
  }

  private call<T>(db: SqlAdapter, extras: readonly SqlValue[], fn: () => T): T {
    this.bridge.enter(db, extras);
    try {
      return fn();
    } catch (error) {
      // A trap or an abort may leave the instance's memory in any state: no later call, of this
      // namespace or another, may run on it. (An error thrown by the host's SQL unwinds through
      // the engine without touching its state, and propagates as it is.)
      if (error instanceof EngineFailure || error instanceof WebAssembly.RuntimeError) {
        this.renew();
        throw error instanceof EngineFailure ? error : new EngineFailure(error.message, { cause: error });
      }
      throw error;
    } finally {
      this.bridge.leave();
      this.afterCall();
    }
  }

  /**
   * The engine runs AssemblyScript's minimal runtime: garbage is collected here, between calls,
   * where nothing the engine allocated is still in use. A call that grew the memory is collected
   * after at once, and one that left it past the ceiling gets a fresh instance.
   */
  private afterCall(): void {
    const bytes = this.wasm.memoryBytes();
    if (bytes > this.memoryCeilingBytes) {
      this.renew();
      return;
    }
    if (bytes > this.collectedBytes || ++this.callsSinceCollect >= CALLS_PER_COLLECT) {
      this.callsSinceCollect = 0;
      this.collectedBytes = bytes;
      this.wasm.collect();
    }
  }

  /** A fresh instance: its memory starts small again, and schemas are registered again on use. */
  private renew(): void {
    this.wasm.renew();
    this.schemaHandles.clear();
    this.callsSinceCollect = 0;
    this.collectedBytes = this.wasm.memoryBytes();
    this.renewals++;
  }

  private handle(schema: Schema): number {
    let handle = this.schemaHandles.get(schema);
    if (handle === undefined) {
      handle = this.wasm.registerSchema(schemaText(schema));
      this.schemaHandles.set(schema, handle);
    }
    return handle;
  }

  /**
   * Creates the schema's tables, the change capture and the engine's bookkeeping. Installing
   * the same schema again changes nothing; adding tables or nullable columns migrates (every
   * client then resets once); any other change is refused with a `schema_mismatch` error.
   */
  install(db: SqlAdapter, schema: Schema): { outcome: "created" | "unchanged" | "migrated" } {
    const outcome = this.call(db, [], () => checkEngineResult(this.wasm.install(this.handle(schema))));
    this.installed.set(db, schema);
    return { outcome: outcome as "created" | "unchanged" | "migrated" };
  }

  /** Answers a pull on a database the schema was installed on through this adapter. */
  pull(db: SqlAdapter, input: PullInput): PullResult {
    return this.answerPull(db, input, false)!;
  }

  /**
   * The answer to a pull that is caught up (or refused), from one read statement: safe without
   * a transaction. Null when the pull has more to do (changes, a reset, a new client group):
   * then run `pull` in a transaction.
   */
  pullIfCaughtUp(db: SqlAdapter, input: PullInput): PullResult | null {
    // A pull from no cookie, or one that changes its queries, is never caught up: nothing to read.
    if (input.cookie === null || (input.queries?.patch.length ?? 0) > 0) return null;
    return this.answerPull(db, input, true);
  }

  private answerPull(db: SqlAdapter, input: PullInput, caughtUpOnly: boolean): PullResult | null {
    const schema = this.installed.get(db);
    if (!schema) throw new EngineError("internal", "install the schema on this database before pulling");
    const visibility = visibilityText(schema, input.visibility);
    const maxRows = input.maxChangeRows ?? DEFAULT_MAX_CHANGE_ROWS;
    const maxBytes = input.maxChangeBytes ?? DEFAULT_MAX_CHANGE_BYTES;
    if (!(maxRows >= 1 && maxBytes >= 1)) throw new EngineError("internal", "pull caps must be at least 1");
    if (
      input.maxQueryRows !== undefined &&
      !(Number.isSafeInteger(input.maxQueryRows) && input.maxQueryRows >= 1)
    ) {
      throw new EngineError("internal", "maxQueryRows must be a positive integer");
    }
    const cookie = input.cookie === null ? NULL_COOKIE : input.cookie;
    if (input.queries) checkPatchCaps(input.queries.patch, input);
    const patch = input.queries
      ? queryPatchText(schema, input.queries.patch, visibility.values.length, input.queries.transformVersion)
      : null;
    if (patch && input.dialect === "replicache") {
      throw new EngineError("bad_request", "queries are pulled in the native dialect");
    }
    const extras = patch ? [...visibility.values, ...patch.values] : [...visibility.values];
    // Followers only of a query-aware pull that changes no query (the engine checks them all).
    const followers =
      patch && !caughtUpOnly && input.followers && input.followers.length > 0 ? input.followers : null;
    const followersExtra = followers ? extras.length : -1;
    if (followers) extras.push(JSON.stringify(followers));
    const metered =
      patch !== null && !caughtUpOnly && input.queryBudgetMs !== undefined && this.meter.attach(db);
    if (metered) this.meter.begin(input.queryBudgetMs!);
    // Every pull passes the identity its group is answered under: a group whose rows were
    // answered under another one (its claims changed) has them recomputed.
    const claimsExtra = extras.length;
    extras.push(visibilityIdentity(visibility));
    // Whether another group's query rows may be copied: the engine compares visibilities by this
    // (a query-aware pull without a patch passes none: its group lends nothing until a reset).
    const visibilityExtra = patch !== null && !caughtUpOnly ? claimsExtra : -1;
    return this.call(db, extras, () => {
      this.wasm.queryLimits(
        metered,
        input.maxGroupQueries ?? Number.MAX_SAFE_INTEGER,
        input.maxGroupQueryBytes ?? Number.MAX_SAFE_INTEGER,
      );
      const result = checkEngineResult(
        this.meteredPull(metered, () =>
          this.wasm.pull(
            this.handle(schema),
            input.clientGroupID,
            input.userID,
            cookie,
            FORMATS[input.dialect ?? "native"],
            maxRows,
            maxBytes,
            visibility.text,
            caughtUpOnly,
            patch !== null,
            patch?.text ?? "",
            input.maxQueryRows ?? DEFAULT_MAX_QUERY_ROWS,
            followersExtra,
            visibilityExtra,
            claimsExtra,
          ),
        ),
      );
      if (result === NEEDS_TRANSACTION) return null;
      const split = result.indexOf(ROW_SEPARATOR);
      const meta = result.slice(0, split).split(COLUMN_SEPARATOR);
      const included = Number(meta[PULL_INCLUDED]);
      const { payloads } = this.bridge;
      let joined = this.bridge.joined;
      let dels = this.bridge.joinedDels;
      let puts = included - dels;
      if (joined === null) {
        const rows = payloads.length === included ? payloads : payloads.slice(0, included);
        puts = countPuts(rows);
        dels = rows.length - puts;
        joined = rows.join(",");
      }
      const body = splice(result.slice(split + 1), joined);
      const answer: PullResult = {
        body,
        cookie: Number(meta[PULL_COOKIE]),
        unchanged: meta[PULL_UNCHANGED] === TRUE,
        reset: meta[PULL_RESET] === TRUE,
        puts,
        dels,
        lastMutationIDs: Number(meta[PULL_MUTATION_IDS]),
        watermark: Number(meta[PULL_WATERMARK]),
        floor: Number(meta[PULL_FLOOR]),
        queryRowsExamined: Number(meta[PULL_QUERY_ROWS_EXAMINED]),
        queryWork: metered ? this.meter.rows : 0,
        queriesRecomputed: Number(meta[PULL_QUERIES_RECOMPUTED]),
        queriesCopied: Number(meta[PULL_QUERIES_COPIED]),
        more: meta[PULL_MORE] === TRUE,
      };
      if (followers) answer.followed = followedPulls(answer, meta);
      return answer;
    });
  }

  /**
   * Runs a pull whose evaluations the meter may stop: the statement it stopped fails, and so does
   * the pull, refused as the query's, with the query named (the host's transaction rolls back).
   */
  private meteredPull(metered: boolean, pull: () => string): string {
    try {
      return pull();
    } catch (error) {
      const query = metered ? this.meter.exceeded : null;
      if (!query) throw error;
      throw new EngineError("query_budget_exceeded", this.meter.message(), query.hash);
    } finally {
      if (metered) this.wasm.queryLimits(false, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    }
  }

  /** Registers the group to the user on first use; refuses another user's group with 403. */
  claimGroup(db: SqlAdapter, clientGroupID: string, userID: string): void {
    this.call(db, [], () => checkEngineResult(this.wasm.claimGroup(clientGroupID, userID)));
  }

  /** Whether one mutation is next (`apply`), already processed (`replay`) or skips ahead (`ooo`). */
  preflight(db: SqlAdapter, ref: MutationRef): Preflight {
    const result = this.call(db, [], () =>
      this.wasm.preflight(ref.clientGroupID, ref.clientID, ref.mutationID),
    );
    return parsePreflight(result);
  }

  /**
   * The preflight of each mutation of a push, in order, as if every mutation found next were
   * then processed (applied, or refused by its mutator: its id advances either way). One call
   * for the whole batch.
   */
  preflightBatch(db: SqlAdapter, clientGroupID: string, mutations: readonly BatchEntry[]): Preflight[] {
    if (mutations.length === 0) return [];
    // A statement per client, not per mutation: the clients go as extra parameters, their ids
    // as a line each.
    const byClient = new Map<string, number[]>();
    mutations.forEach(({ clientID }, index) => {
      const indexes = byClient.get(clientID);
      if (indexes) indexes.push(index);
      else byClient.set(clientID, [index]);
    });
    const plan = [...byClient.values()]
      .map((indexes) => indexes.map((index) => mutations[index]!.mutationID).join(","))
      .join(ROW_SEPARATOR);
    const lines = this.call(db, [...byClient.keys()], () =>
      this.wasm.preflightBatch(clientGroupID, plan),
    ).split(ROW_SEPARATOR);
    const preflights = new Array<Preflight>(mutations.length);
    let line = 0;
    for (const indexes of byClient.values()) {
      for (const index of indexes) preflights[index] = parsePreflight(lines[line++]!);
    }
    return preflights;
  }

  /**
   * Records a processed mutation in the caller's transaction and commits its version: together
   * with the mutator's writes it becomes one new version. Also the way to record an
   * application error, after the host rolled the mutator's writes back.
   */
  finalize(db: SqlAdapter, ref: MutationRef): void {
    this.call(db, [], () => this.wasm.finalize(ref.clientGroupID, ref.clientID, ref.mutationID));
  }

  /**
   * Records the mutations of a push as processed (each client's last id) and commits one
   * version for all of them, in the caller's transaction.
   */
  finalizeBatch(db: SqlAdapter, clientGroupID: string, processed: readonly BatchEntry[]): void {
    if (processed.length === 0) return;
    const last = new Map<string, number>();
    for (const { clientID, mutationID } of processed)
      last.set(clientID, Math.max(last.get(clientID) ?? 0, mutationID));
    const lastIDs = [...last.values()].join(ROW_SEPARATOR);
    this.call(db, [...last.keys()], () => this.wasm.finalizeBatch(clientGroupID, lastIDs));
  }

  /**
   * Keeps the newest `retainChanges` versions: raises the floor and deletes at most `limit`
   * older changes per call; `more` says another call has more to delete.
   */
  prune(db: SqlAdapter, retainChanges: number, limit = DEFAULT_PRUNE_LIMIT): PruneResult {
    if (!Number.isSafeInteger(retainChanges) || retainChanges < 0) {
      throw new EngineError("bad_request", "retainChanges must be a non-negative integer");
    }
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new EngineError("bad_request", "limit must be positive");
    const result = this.call(db, [], () => this.wasm.prune(retainChanges, limit));
    const [deleted, floor, more] = result.split(COLUMN_SEPARATOR).map(Number) as number[];
    return { deleted: deleted!, floor: floor!, more: more === 1 };
  }

  /**
   * Commits what the caller's transaction wrote to the modelled tables outside a push (a host's
   * own writes, an ingest) as one new version, so incremental pulls see it. Nothing pending: no
   * new version (`committed` false).
   */
  commit(db: SqlAdapter): { watermark: number; committed: boolean } {
    const result = this.call(db, [], () => this.wasm.commit());
    const [watermark, committed] = result.split(COLUMN_SEPARATOR);
    return { watermark: Number(watermark), committed: committed === "1" };
  }

  /** The upstream cursor, the newest fencing token and the snapshot generation in progress. */
  upstreamState(db: SqlAdapter): UpstreamState {
    return JSON.parse(this.call(db, [], () => this.wasm.upstreamState())) as UpstreamState;
  }

  /** Takes a new fencing token: an ingester that holds an older one can no longer write. */
  claimFence(db: SqlAdapter): number {
    return this.call(db, [], () => this.wasm.claimFence());
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
    const schema = this.installedOn(db);
    const tables = Object.keys(schema.tables);
    const extras: SqlValue[] = [];
    const lines: string[] = [];
    for (const writes of batch.tables) {
      const index = tables.indexOf(writes.table);
      if (index < 0) throw new EngineError("internal", `${writes.table} is not in the schema`);
      const param = (rows: readonly unknown[]) =>
        rows.length === 0 ? -1 : extras.push(JSON.stringify(rows)) - 1;
      const deletes = param(writes.deletes);
      const upserts = param(writes.upserts);
      if (!writes.truncate && deletes < 0 && upserts < 0) continue;
      lines.push([index, writes.truncate ? 1 : 0, deletes, upserts].join(COLUMN_SEPARATOR));
    }
    const result = this.call(db, extras, () =>
      checkEngineResult(
        this.wasm.applyUpstream(
          this.handle(schema),
          lines.join(ROW_SEPARATOR),
          batch.watermark,
          options.fence,
          options.into === "snapshot",
        ),
      ),
    );
    const [status, rows, cursor, committed] = result.split(COLUMN_SEPARATOR);
    return {
      alreadyApplied: status === UPSTREAM_ALREADY_APPLIED,
      rows: Number(rows),
      cursor: cursor!,
      committed: committed === "1",
    };
  }

  /** Starts a snapshot generation at the first page's watermark: empty staging tables. */
  beginSnapshot(db: SqlAdapter, watermark: string, fence: number): UpstreamState {
    const schema = this.installedOn(db);
    return JSON.parse(
      this.call(db, [], () =>
        checkEngineResult(this.wasm.beginSnapshot(this.handle(schema), watermark, fence)),
      ),
    ) as UpstreamState;
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
    const schema = this.installedOn(db);
    const rows = JSON.stringify(page.rows);
    return Number(
      this.call(db, [rows], () =>
        checkEngineResult(
          this.wasm.applySnapshotPage(
            this.handle(schema),
            page.table,
            page.nextCursor ?? "",
            page.nextCursor === null,
            fence,
          ),
        ),
      ),
    );
  }

  /**
   * Swaps the caught-up generation's staging tables in, as one new version that resets every
   * client; answers the new cursor (the catch-up's watermark).
   */
  finalizeSnapshot(db: SqlAdapter, fence: number): string {
    const schema = this.installedOn(db);
    return this.call(db, [], () => checkEngineResult(this.wasm.finalizeSnapshot(this.handle(schema), fence)));
  }

  private installedOn(db: SqlAdapter): Schema {
    const installed = this.installed.get(db);
    if (!installed) throw new EngineError("internal", "install the schema on this database first");
    return installed;
  }

  /**
   * Whom the versions after `since` concern: the tables they changed and, for each probe, the
   * keys (or whether any row) their rows' images before and after each change admit. A span the
   * log no longer holds whole (a raised floor) concerns everyone. Reads only the span's changes.
   */
  changeAudience(db: SqlAdapter, since: number, probes: readonly AudienceProbe[]): ChangeAudience {
    return changeAudience(db, this.installedOn(db), since, probes);
  }

  /** Every client resets once, on its next pull. */
  invalidate(db: SqlAdapter): void {
    this.call(db, [], () => this.wasm.invalidate());
  }

  /**
   * The rows a query AST (of the subset `parseQueryAST` accepts) holds for a caller, evaluated
   * from scratch in one statement: its root rows (node 0) in the query's order, then the rows of
   * its related subqueries (node: the subquery's position in depth-first order, from 1). A `bad_request` names the part of the AST the engine cannot answer.
   */
  queryRows(db: SqlAdapter, ast: unknown, options: { visibility?: Visibility } = {}): HeldRow[] {
    const schema = this.installedOn(db);
    const parsed = parseQueryAST(ast);
    if (!parsed.ok) throw new EngineError("bad_request", parsed.message);
    const plan = queryPlan(schema, parsed.value);
    const visibility = visibilityText(schema, options.visibility);
    const text = this.call(db, visibility.values, () =>
      checkEngineResult(this.wasm.evaluateQuery(this.handle(schema), plan, visibility.text)),
    );
    if (text === "") return [];
    return text.split(ROW_SEPARATOR).map((line) => {
      const first = line.indexOf(COLUMN_SEPARATOR);
      const second = line.indexOf(COLUMN_SEPARATOR, first + 1);
      return {
        node: Number(line.slice(0, first)),
        table: line.slice(first + 1, second),
        key: JSON.parse(line.slice(second + 1)) as unknown[],
      };
    });
  }

  /**
   * A client group's active queries (hash, name and args as the patch put them) and the query
   * transform version its last query-aware pull stored (null: none).
   */
  groupQueries(
    db: SqlAdapter,
    clientGroupID: string,
  ): { version: string | null; queries: { hash: string; name: string; args: unknown }[] } {
    return JSON.parse(this.call(db, [], () => this.wasm.groupQueries(clientGroupID)));
  }

  state(db: SqlAdapter): EngineState {
    const result = this.call(db, [], () => this.wasm.state());
    if (result === "") throw new EngineError("internal", "the engine is not installed in this database");
    const [watermark, floor, changes, clients, clientGroups] = result
      .split(COLUMN_SEPARATOR)
      .map(Number) as number[];
    return {
      engineVersion: this.version,
      watermark: watermark!,
      floor: floor!,
      changes: changes!,
      clients: clients!,
      clientGroups: clientGroups!,
    };
  }

  listChanges(
    db: SqlAdapter,
    since: number,
    limit: number,
  ): { version: number; table: string; key: unknown[] }[] {
    return JSON.parse(this.call(db, [], () => this.wasm.listChanges(since, limit)));
  }

  clients(
    db: SqlAdapter,
  ): { clientID: string; clientGroupID: string; userID: string; lastMutationID: number }[] {
    return JSON.parse(this.call(db, [], () => this.wasm.clients()));
  }

  /**
   * The last mutation id of each client of a group that belongs to `userID`, by client id; empty
   * for a group the engine does not know or another user's. Reads that group's clients only.
   */
  groupMutationIDs(db: SqlAdapter, clientGroupID: string, userID: string): Record<string, number> {
    return JSON.parse(this.call(db, [], () => this.wasm.groupMutationIDs(clientGroupID, userID)));
  }

  /** The size of the engine's WASM linear memory. */
  memoryBytes(): number {
    return this.wasm.memoryBytes();
  }
}

export function loadEngine(
  source: WebAssembly.Module | BufferSource,
  options: EngineOptions = {},
): Promise<Engine> {
  return Engine.load(source, options);
}

/**
 * The followers' answers: the leader's body with each follower's own lastMutationIDChanges in
 * place of the leader's (which the body holds right after its cookie, `idsLength` characters).
 */
function followedPulls(leader: PullResult, meta: readonly string[]): FollowedPull[] {
  const text = meta[PULL_FOLLOWED];
  if (!text) return [];
  const head = `{"cookie":${leader.cookie},"lastMutationIDChanges":`;
  const tail = leader.body.slice(head.length + Number(meta[PULL_IDS_LENGTH]));
  const { followed: _, ...shared } = leader;
  return (JSON.parse(text) as Array<[string, Record<string, number>]>).map(([clientGroupID, ids]) => ({
    ...shared,
    clientGroupID,
    body: head + JSON.stringify(ids) + tail,
    lastMutationIDs: Object.keys(ids).length,
  }));
}

/** "<status>\t<last id>" */
function parsePreflight(line: string): Preflight {
  const tab = line.indexOf(COLUMN_SEPARATOR);
  return { status: line.slice(0, tab) as PreflightStatus, lastMutationID: Number(line.slice(tab + 1)) };
}
