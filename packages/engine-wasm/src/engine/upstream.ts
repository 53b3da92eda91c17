// An upstream's rows coming in: the cursor and fencing token, reduced batches, and snapshot
// generations built in staging tables and swapped in.
import { COLUMN_SEPARATOR, ROW_SEPARATOR, UPSTREAM_ALREADY_APPLIED } from "../abi.js";
import { checkEngineResult, EngineError } from "../engine-error.js";
import type { SqlAdapter, SqlValue, UpstreamApplyResult, UpstreamState } from "../types.js";
import type { TableWrites } from "../upstream-batch.js";
import type { EngineCore } from "./core.js";

export function upstreamState(core: EngineCore, db: SqlAdapter): UpstreamState {
  return JSON.parse(core.call(db, [], () => core.wasm.upstreamState())) as UpstreamState;
}

export function claimFence(core: EngineCore, db: SqlAdapter): number {
  return core.call(db, [], () => core.wasm.claimFence());
}

export function applyUpstream(
  core: EngineCore,
  db: SqlAdapter,
  batch: { watermark: string; tables: readonly TableWrites[] },
  options: { fence: number; into?: "tables" | "snapshot" },
): UpstreamApplyResult {
  const schema = core.installedOn(db);
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
  const result = core.call(db, extras, () =>
    checkEngineResult(
      core.wasm.applyUpstream({
        schema: core.handle(schema),
        plan: lines.join(ROW_SEPARATOR),
        watermark: batch.watermark,
        fence: options.fence,
        intoSnapshot: options.into === "snapshot",
      }),
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

export function beginSnapshot(
  core: EngineCore,
  db: SqlAdapter,
  watermark: string,
  fence: number,
): UpstreamState {
  const schema = core.installedOn(db);
  return JSON.parse(
    core.call(db, [], () =>
      checkEngineResult(core.wasm.beginSnapshot({ schema: core.handle(schema), watermark, fence })),
    ),
  ) as UpstreamState;
}

export function applySnapshotPage(
  core: EngineCore,
  db: SqlAdapter,
  page: { table: string; rows: readonly unknown[][]; nextCursor: string | null },
  fence: number,
): number {
  const schema = core.installedOn(db);
  const rows = JSON.stringify(page.rows);
  return Number(
    core.call(db, [rows], () =>
      checkEngineResult(
        core.wasm.applySnapshotPage({
          schema: core.handle(schema),
          table: page.table,
          nextCursor: page.nextCursor ?? "",
          last: page.nextCursor === null,
          fence,
        }),
      ),
    ),
  );
}

export function finalizeSnapshot(core: EngineCore, db: SqlAdapter, fence: number): string {
  const schema = core.installedOn(db);
  return core.call(db, [], () =>
    checkEngineResult(core.wasm.finalizeSnapshot({ schema: core.handle(schema), fence })),
  );
}
