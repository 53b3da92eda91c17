// The change log: versions committed outside a push, the floor raised by retention, and a
// reset of every client.
import { COLUMN_SEPARATOR } from "../abi.js";
import { EngineError } from "../engine-error.js";
import type { PruneResult, SqlAdapter } from "../types.js";
import type { EngineCore } from "./core.js";

export const DEFAULT_PRUNE_LIMIT = 10_000;

export function prune(core: EngineCore, db: SqlAdapter, retain: number, limit: number): PruneResult {
  if (!Number.isSafeInteger(retain) || retain < 0) {
    throw new EngineError("bad_request", "retainChanges must be a non-negative integer");
  }
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new EngineError("bad_request", "limit must be positive");
  const queryTables = core.hasQueryTables(db);
  const result = core.call(db, [], () => core.wasm.prune({ retain, limit, queryTables }));
  const [deleted, floor, more] = result.split(COLUMN_SEPARATOR).map(Number) as number[];
  return { deleted: deleted!, floor: floor!, more: more === 1 };
}

export function commit(core: EngineCore, db: SqlAdapter): { watermark: number; committed: boolean } {
  const result = core.call(db, [], () => core.wasm.commit());
  const [watermark, committed] = result.split(COLUMN_SEPARATOR);
  return { watermark: Number(watermark), committed: committed === "1" };
}

export function invalidate(core: EngineCore, db: SqlAdapter): void {
  core.call(db, [], () => core.wasm.invalidate());
}
