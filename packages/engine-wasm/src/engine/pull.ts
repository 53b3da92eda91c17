// Pulls: the caps and the query patch checked and put in text, the extra parameters laid out,
// the engine's answer read back by its meta fields, and the followers' answers derived from it.
import type { Dialect } from "@weir/protocol";
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
} from "../abi.js";
import { checkEngineResult, EngineError } from "../engine-error.js";
import { checkPatchCaps } from "../group-caps.js";
import { QueryPageTurn } from "../query-pages.js";
import { queryPatchText } from "../query-patch.js";
import type { ResetPages } from "../reset-pages.js";
import type { FollowedPull, PullInput, PullResult, SqlAdapter } from "../types.js";
import { visibilityIdentity, visibilityText } from "../visibility-text.js";
import { countPuts, splice } from "../wire-text.js";
import type { EngineCore } from "./core.js";

export const DEFAULT_MAX_CHANGE_ROWS = 10_000;
export const DEFAULT_MAX_CHANGE_BYTES = 2_000_000;
/** The rows a query-aware pull's evaluations may produce before it is refused. */
export const DEFAULT_MAX_QUERY_ROWS = 1_000_000;
const FORMATS: Record<Dialect, number> = { native: FORMAT_NATIVE, replicache: FORMAT_REPLICACHE };

/** A pull; `caughtUpOnly`: only a caught-up answer, from one read statement (null otherwise). */
export function answerPull(
  core: EngineCore,
  db: SqlAdapter,
  input: PullInput,
  caughtUpOnly: boolean,
): PullResult | null {
  const schema = core.installedOn(db, "before pulling");
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
  const { meter, wasm } = core;
  // A pull with queries is metered, and so is one without where a group may have pulled with
  // them (the namespace has the query tables): its pulls answer by its queries either way.
  const queryTables = core.hasQueryTables(db);
  const metered =
    (patch !== null || queryTables) && !caughtUpOnly && input.queryBudgetMs !== undefined && meter.attach(db);
  // A plain pull that resets reads its rows in pages where the caller pages (ResetPages).
  const resetPages =
    patch === null && !caughtUpOnly && input.queryPages !== undefined && meter.attach(db)
      ? input.queryPages.reset
      : null;
  if (metered)
    meter.begin(
      input.queryBudgetMs!,
      input.queryPages ?? null,
      input.answerMs ?? input.queryBudgetMs!,
      input.queryTotalBudgetMs ?? input.queryBudgetMs!,
    );
  else if (resetPages) meter.begin(Number.POSITIVE_INFINITY, input.queryPages!);
  // Every pull passes the identity its group is answered under: a group whose rows were
  // answered under another one (its claims changed) has them recomputed.
  const claimsExtra = extras.length;
  extras.push(visibilityIdentity(visibility));
  // Whether another group's query rows may be copied: the engine compares visibilities by this
  // (a query-aware pull without a patch passes none: its group lends nothing until a reset).
  const visibilityExtra = patch !== null && !caughtUpOnly ? claimsExtra : -1;
  return core.call(db, extras, () => {
    wasm.queryLimits({
      metered,
      maxGroupQueries: input.maxGroupQueries ?? Number.MAX_SAFE_INTEGER,
      maxGroupQueryBytes: input.maxGroupQueryBytes ?? Number.MAX_SAFE_INTEGER,
      nameComplete: input.nameCompleteQueries !== false,
    });
    const result = checkEngineResult(
      meteredPull(core, metered || resetPages !== null, () =>
        wasm.pull({
          schema: core.handle(schema),
          groupID: input.clientGroupID,
          userID: input.userID,
          cookie: input.cookie === null ? NULL_COOKIE : input.cookie,
          format: FORMATS[input.dialect ?? "native"],
          maxRows,
          maxBytes,
          visibility: visibility.text,
          caughtUpOnly,
          queriesSupplied: patch !== null,
          queryPatch: patch?.text ?? "",
          maxQueryRows: input.maxQueryRows ?? DEFAULT_MAX_QUERY_ROWS,
          queryTables,
          followersExtra,
          visibilityExtra,
          claimsExtra,
          pagedReset: resetPages !== null,
        }),
      ),
    );
    if (result === NEEDS_TRANSACTION) return null;
    // The pull created them, unless its transaction is rolled back: the database tells next time.
    if (!queryTables && patch !== null) core.queryTables.delete(db);
    const { answer, meta } = readPullAnswer(core, result, metered, resetPages?.answered ? resetPages : null);
    if (followers) answer.followed = followedPulls(answer, meta);
    return answer;
  });
}

/** The meta fields of an answer the engine wrote at the PULL_* positions, read by name. */
interface PullMeta {
  cookie: number;
  reset: boolean;
  included: number;
  lastMutationIDs: number;
  watermark: number;
  floor: number;
  unchanged: boolean;
  queryRowsExamined: number;
  queriesRecomputed: number;
  more: boolean;
  idsLength: number;
  followed: string;
  queriesCopied: number;
}

function readPullMeta(text: string): PullMeta {
  const meta = text.split(COLUMN_SEPARATOR);
  return {
    cookie: Number(meta[PULL_COOKIE]),
    reset: meta[PULL_RESET] === TRUE,
    included: Number(meta[PULL_INCLUDED]),
    lastMutationIDs: Number(meta[PULL_MUTATION_IDS]),
    watermark: Number(meta[PULL_WATERMARK]),
    floor: Number(meta[PULL_FLOOR]),
    unchanged: meta[PULL_UNCHANGED] === TRUE,
    queryRowsExamined: Number(meta[PULL_QUERY_ROWS_EXAMINED]),
    queriesRecomputed: Number(meta[PULL_QUERIES_RECOMPUTED]),
    more: meta[PULL_MORE] === TRUE,
    idsLength: Number(meta[PULL_IDS_LENGTH]),
    followed: meta[PULL_FOLLOWED] ?? "",
    queriesCopied: Number(meta[PULL_QUERIES_COPIED]),
  };
}

/** The answer: its meta, and its body with the row payloads the bridge kept spliced in. */
function readPullAnswer(
  core: EngineCore,
  result: string,
  metered: boolean,
  reset: ResetPages | null,
): { answer: PullResult; meta: PullMeta } {
  const split = result.indexOf(ROW_SEPARATOR);
  const meta = readPullMeta(result.slice(0, split));
  const { payloads } = core.bridge;
  let joined = core.bridge.joined;
  let dels = core.bridge.joinedDels;
  let puts = meta.included - dels;
  if (reset) {
    // A reset read in pages: their rows, then those changed since the first page (bridge.joined).
    // Only the latter may hold dels (bridge.joinedDels, 0 when it read none).
    joined = joined ? (reset.rows > 0 ? `${reset.joined()},${joined}` : joined) : reset.joined();
  } else if (joined === null) {
    const rows = payloads.length === meta.included ? payloads : payloads.slice(0, meta.included);
    puts = countPuts(rows);
    dels = rows.length - puts;
    joined = rows.join(",");
  }
  const answer: PullResult = {
    body: splice(result.slice(split + 1), joined),
    cookie: meta.cookie,
    unchanged: meta.unchanged,
    reset: meta.reset,
    puts,
    dels,
    lastMutationIDs: meta.lastMutationIDs,
    watermark: meta.watermark,
    floor: meta.floor,
    queryRowsExamined: meta.queryRowsExamined,
    queryWork: metered ? core.meter.totalRows() : 0,
    queriesRecomputed: meta.queriesRecomputed,
    queriesCopied: meta.queriesCopied,
    more: meta.more,
  };
  return { answer, meta };
}

/**
 * Runs a pull whose evaluations the meter may stop: the statement it stopped fails, and so does
 * the pull, refused as the query's, with the query named (the host's transaction rolls back),
 * or stopped between pages, of a query's root or a reset (`QueryPageTurn`: the caller runs it again).
 */
function meteredPull(core: EngineCore, metered: boolean, pull: () => string): string {
  try {
    return pull();
  } catch (error) {
    // A driver may wrap what the SQL function threw: the meter knows why the statement failed.
    if (metered && core.meter.turned()) throw new QueryPageTurn();
    const query = metered ? core.meter.exceeded : null;
    if (!query) throw error;
    throw new EngineError("query_budget_exceeded", core.meter.message(), query.hash, core.meter.totalRows());
  } finally {
    if (metered) {
      core.meter.end();
      core.wasm.queryLimits({
        metered: false,
        maxGroupQueries: Number.MAX_SAFE_INTEGER,
        maxGroupQueryBytes: Number.MAX_SAFE_INTEGER,
        nameComplete: true,
      });
    }
  }
}

/**
 * The followers' answers: the leader's body with each follower's own lastMutationIDChanges in
 * place of the leader's (which the body holds right after its cookie, `idsLength` characters).
 */
function followedPulls(leader: PullResult, meta: PullMeta): FollowedPull[] {
  if (!meta.followed) return [];
  const head = `{"cookie":${leader.cookie},"lastMutationIDChanges":`;
  const tail = leader.body.slice(head.length + meta.idsLength);
  const { followed: _, ...shared } = leader;
  return (JSON.parse(meta.followed) as Array<[string, Record<string, number>]>).map(
    ([clientGroupID, ids]) => ({
      ...shared,
      clientGroupID,
      body: head + JSON.stringify(ids) + tail,
      lastMutationIDs: Object.keys(ids).length,
    }),
  );
}
