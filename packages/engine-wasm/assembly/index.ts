// The engine's exports. Each returns plain values or text; failures come back as
// "!<status>\t<code>\t<message>" (see errors.ts) rather than traps, so the loader can turn
// them into typed errors and the instance stays usable.

import { listClients as allClients, listChanges as changesAfter, stateSummary } from "./inspect";
import { install as installSchema } from "./install";
import { pull as answerPull, claimGroup as claim } from "./pull";
import {
  preflightOne as checkOne,
  preflight as checkOrder,
  finalizeOne as recordOne,
  finalize as recordProcessed,
} from "./push";
import { invalidate as invalidateAll, prune as pruneChanges } from "./retention";
import { parseSchema, Schema } from "./schema";
import { commitPending } from "./state";
import {
  upstreamState as readUpstream,
  beginSnapshot as startSnapshot,
  finalizeSnapshot as swapSnapshot,
  claimFence as takeFence,
  applySnapshotPage as writeSnapshotPage,
  applyUpstream as writeUpstream,
} from "./upstream";

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

export function install(schema: i32): string {
  return installSchema(schemaTexts[schema], ENGINE_VERSION);
}

// Numbers cross the boundary as f64 (the host holds them as JS numbers, all safe integers),
// which spares the host a BigInt per call.

export function pull(
  schema: i32,
  groupID: string,
  userID: string,
  cookie: f64,
  dialect: i32,
  maxRows: f64,
  maxBytes: f64,
  visibility: string,
  caughtUpOnly: bool,
): string {
  return answerPull(
    schemas[schema],
    groupID,
    userID,
    <i64>cookie,
    dialect,
    <i64>maxRows,
    <i64>maxBytes,
    visibility,
    caughtUpOnly,
  );
}

export function claimGroup(groupID: string, userID: string): string {
  return claim(groupID, userID);
}

export function preflightOne(groupID: string, clientID: string, id: f64): string {
  return checkOne(groupID, clientID, <i64>id);
}

export function finalizeOne(groupID: string, clientID: string, id: f64): void {
  recordOne(groupID, clientID, <i64>id);
}

/** A batch's clients are the host's extra parameters; `plan` holds their mutation ids. */
export function preflight(groupID: string, plan: string): string {
  return checkOrder(groupID, plan);
}

/** A batch's clients are the host's extra parameters; `lastIDs` holds their last ids. */
export function finalize(groupID: string, lastIDs: string): void {
  recordProcessed(groupID, lastIDs);
}

export function prune(retain: f64, limit: f64): string {
  return pruneChanges(<i64>retain, <i64>limit);
}

/** Commits the changes pending in the caller's transaction as a new version. */
export function commit(): string {
  return commitPending();
}

export function invalidate(): void {
  invalidateAll();
}

export function state(): string {
  return stateSummary();
}

export function listChanges(since: f64, limit: f64): string {
  return changesAfter(<i64>since, <i64>limit);
}

export function listClients(): string {
  return allClients();
}

export function upstreamState(): string {
  return readUpstream();
}

export function claimFence(): f64 {
  return <f64>takeFence();
}

/** A reduced batch's tables are lines of `plan`; their rows are the host's extra parameters. */
export function applyUpstream(
  schema: i32,
  plan: string,
  watermark: string,
  fence: f64,
  intoSnapshot: bool,
): string {
  return writeUpstream(schemas[schema], plan, watermark, <i64>fence, intoSnapshot);
}

export function beginSnapshot(schema: i32, watermark: string, fence: f64): string {
  return startSnapshot(schemas[schema], watermark, <i64>fence);
}

/** The page's rows are the host's extra parameter 0. */
export function applySnapshotPage(
  schema: i32,
  table: string,
  nextCursor: string,
  last: bool,
  fence: f64,
): string {
  return writeSnapshotPage(schemas[schema], table, nextCursor, last, <i64>fence);
}

export function finalizeSnapshot(schema: i32, fence: f64): string {
  return swapSnapshot(schemas[schema], <i64>fence);
}
