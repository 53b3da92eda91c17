// The engine's exports, declared once with their parameters by name in src/engine-calls.ts, from
// which the loader's glue is derived (engine-calls.test.ts fails when these drift from it). Each
// returns plain values or text; a refusal comes back as "!<code>\t<message>" (see errors.ts), not
// as a trap.
// Numbers cross the boundary as f64 (the host holds them as JS numbers, all safe integers),
// which spares the host a BigInt per call; the modules take them as i64.
import { ERROR_MARK } from "../src/abi";
import { noQueryEngine, QUERY_ENGINE } from "./features";
import * as inspect from "./inspect";
import { install as installSchema } from "./install";
import * as pulls from "./pull";
import * as push from "./push";
import * as queries from "./query/evaluate";
import { indexNamedQueries } from "./query/indexes";
import { setQueryLimits } from "./query/limits";
import * as queryPulls from "./query/pull";
import * as retention from "./retention";
import { parseSchema, Schema } from "./schema";
import { commitPending } from "./state";
import { extraParam } from "./text";
import * as upstream from "./upstream";

const ENGINE_VERSION = "0.2.0";

const schemaTexts: string[] = [];
const schemas: Schema[] = [];

export function engineVersion(): string {
  return ENGINE_VERSION;
}

/** Parses a schema once and answers a handle for later calls (the same text, the same handle). */
export function registerSchema(text: string): i32 {
  for (let i = 0; i < schemaTexts.length; i++) {
    if (schemaTexts[i] == text) return i;
  }
  schemaTexts.push(text);
  schemas.push(parseSchema(text));
  return schemaTexts.length - 1;
}

/** `queries`: the named queries whose indexes are created now, as indexNamedQueries reads them. */
export function install(schema: i32, queries: string): string {
  if (!QUERY_ENGINE && queries.length > 0) return noQueryEngine();
  const outcome = installSchema(schemaTexts[schema], ENGINE_VERSION);
  if (QUERY_ENGINE && !outcome.startsWith(ERROR_MARK)) indexNamedQueries(schemas[schema], queries);
  return outcome;
}

/** Whether this build has the query engine (1) or is the lean one without it (0). */
export function queryEngine(): i32 {
  return QUERY_ENGINE ? 1 : 0;
}

export function pull(
  schema: i32,
  groupID: string,
  userID: string,
  cookie: f64,
  format: i32,
  maxRows: f64,
  maxBytes: f64,
  visibility: string,
  caughtUpOnly: bool,
  queriesSupplied: bool,
  queryPatch: string,
  maxQueryRows: f64,
  queryTables: bool,
  followersExtra: i32,
  visibilityExtra: i32,
  claimsExtra: i32,
  pagedReset: bool,
): string {
  return pulls.pull(
    schemas[schema],
    groupID,
    userID,
    <i64>cookie,
    format,
    <i64>maxRows,
    <i64>maxBytes,
    visibility,
    caughtUpOnly,
    queriesSupplied,
    queryPatch,
    <i64>maxQueryRows,
    queryTables,
    followersExtra < 0 ? "" : extraParam(followersExtra),
    visibilityExtra < 0 ? "null" : extraParam(visibilityExtra),
    claimsExtra < 0 ? "null" : extraParam(claimsExtra),
    pagedReset,
  );
}

/**
 * What the next pull's queries may do: metered work (see query/limits.ts), caps of a group's
 * queries; and whether its answer names the group's complete queries.
 */
export function queryLimits(
  metered: bool,
  maxGroupQueries: f64,
  maxGroupQueryBytes: f64,
  nameComplete: bool,
): void {
  if (QUERY_ENGINE) setQueryLimits(metered, <i64>maxGroupQueries, <i64>maxGroupQueryBytes, nameComplete);
}

export function claimGroup(groupID: string, userID: string): string {
  return pulls.claimGroup(groupID, userID);
}

export function preflight(groupID: string, clientID: string, id: f64): string {
  return push.preflight(groupID, clientID, <i64>id);
}

export function finalize(groupID: string, clientID: string, id: f64): void {
  push.finalize(groupID, clientID, <i64>id);
}

/** A batch's clients are the host's extra parameters; `plan` holds their mutation ids. */
export function preflightBatch(groupID: string, plan: string): string {
  return push.preflightBatch(groupID, plan);
}

/** A batch's clients are the host's extra parameters; `lastIDs` holds their last ids. */
export function finalizeBatch(groupID: string, lastIDs: string): void {
  push.finalizeBatch(groupID, lastIDs);
}

export function prune(retain: f64, limit: f64, queryTables: bool): string {
  return retention.prune(<i64>retain, <i64>limit, queryTables);
}

/** Commits the changes pending in the caller's transaction as a new version. */
export function commit(): string {
  return commitPending();
}

export function invalidate(): void {
  retention.invalidate();
}

export function state(): string {
  return inspect.stateSummary();
}

export function listChanges(since: f64, limit: f64): string {
  return inspect.listChanges(<i64>since, <i64>limit);
}

export function clients(): string {
  return inspect.listClients();
}

/** A group's last mutation ids by client (JSON), when it is `userID`'s. */
export function groupMutationIDs(groupID: string, userID: string): string {
  return inspect.groupMutationIDs(groupID, userID);
}

export function upstreamState(): string {
  return upstream.upstreamState();
}

export function claimFence(): f64 {
  return <f64>upstream.claimFence();
}

/** A reduced batch's tables are lines of `plan`; their rows are the host's extra parameters. */
export function applyUpstream(
  schema: i32,
  plan: string,
  watermark: string,
  fence: f64,
  intoSnapshot: bool,
): string {
  return upstream.applyUpstream(schemas[schema], plan, watermark, <i64>fence, intoSnapshot);
}

export function beginSnapshot(schema: i32, watermark: string, fence: f64): string {
  return upstream.beginSnapshot(schemas[schema], watermark, <i64>fence);
}

/** The page's rows are the host's extra parameter 0. */
export function applySnapshotPage(
  schema: i32,
  table: string,
  nextCursor: string,
  last: bool,
  fence: f64,
): string {
  return upstream.applySnapshotPage(schemas[schema], table, nextCursor, last, <i64>fence);
}

export function finalizeSnapshot(schema: i32, fence: f64): string {
  return upstream.finalizeSnapshot(schemas[schema], <i64>fence);
}

/** A group's stored queries and query transform version (JSON). */
export function groupQueries(groupID: string): string {
  if (!QUERY_ENGINE) return noQueryEngine();
  return queryPulls.groupQueries(groupID);
}

/** The rows a query plan holds for the caller (the visibility's values are the extra parameters). */
export function evaluateQuery(schema: i32, plan: string, visibility: string): string {
  if (!QUERY_ENGINE) return noQueryEngine();
  return queries.evaluateQuery(schemas[schema], plan, visibility);
}
