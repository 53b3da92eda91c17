import { type UpstreamSnapshotPage as SnapshotPage, UpstreamCallError } from "@weir/protocol";
import type pg from "pg";
import type { ChangeBuffer } from "./change-buffer.js";
import { quoteIdentifier as quote } from "./quote-identifier.js";
import type { TablePlan } from "./read-tables.js";

/** Every value as the text PostgreSQL prints, decoded by the same codecs as the change stream. */
const RAW_TEXT = { getTypeParser: () => (text: string) => text };

function encodeCursor(key: string[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

function decodeCursor(cursor: string, plan: TablePlan): string[] {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = null;
  }
  if (
    !Array.isArray(key) ||
    key.length !== plan.primaryKey.length ||
    !key.every((part) => typeof part === "string")
  ) {
    throw new UpstreamCallError(
      400,
      "bad_request",
      `cursor is not one this server gave for table ${plan.name}`,
    );
  }
  return key as string[];
}

/** `pg_current_snapshot()` as text: `xmin:xmax:xip,xip,...` (64-bit transaction ids). */
function parseSnapshot(text: string): { xmax: bigint; inProgress: bigint[] } {
  const [, xmax, xip] = text.split(":");
  return { xmax: BigInt(xmax!), inProgress: xip ? xip.split(",").map(BigInt) : [] };
}

const XID_MASK = 0xffffffffn;

/**
 * The snapshot's watermark S: the head of the buffer, lowered below the oldest buffered
 * transaction that the page's snapshot could not see. A commit becomes visible to snapshots
 * only after its WAL record is written (and may already be decoded and buffered), so the
 * WAL position at the page's read is no safe bound; the transaction ids are. Every change the
 * page misses has a watermark above S, and changes after S that the page already holds are
 * harmless to apply again (each carries the whole row).
 */
function snapshotWatermark(buffer: ChangeBuffer, snapshot: string): bigint {
  const { xmax, inProgress } = parseSnapshot(snapshot);
  const head = buffer.snapshotStart;
  const invisible = buffer.oldestInvisible(
    inProgress.map((xid) => Number(xid & XID_MASK)),
    Number(xmax & XID_MASK),
  );
  if (invisible === null || invisible > head) return head;
  return invisible - 1n;
}

/** Lost or refused connections (and a server shutting down) are 503s; other SQL errors are bugs. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return code.startsWith("08") || code.startsWith("57P");
}

/** An invalid namespace for the tenant column's type (`abc` for an integer) matches no row. */
function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("22");
}

/**
 * One page of a table in primary-key order, after `cursor` (keyset paging: each page is one
 * index range scan, however deep into the table it is), filtered to `tenant`'s rows when the
 * table has a tenant column. The page is read in a REPEATABLE READ transaction whose snapshot
 * also sets the page's watermark.
 */
export async function readSnapshotPage(
  pool: pg.Pool,
  buffer: ChangeBuffer,
  plan: TablePlan,
  tenant: string | undefined,
  cursor: string | null,
  limit: number,
): Promise<SnapshotPage> {
  const after = cursor === null ? null : decodeCursor(cursor, plan);
  // Qualified: the key's text form is selected too, under the same names.
  const keyColumns = plan.primaryKey.map((name) => `t.${quote(name)}`);
  const params: unknown[] = [];
  const where: string[] = [];
  if (plan.tenantColumn !== null && tenant !== undefined) {
    params.push(tenant, tenant);
    const column = `t.${quote(plan.tenantColumn)}`;
    // The typed comparison can use an index; the text one matches the change stream's rule
    // (a namespace is the tenant value as PostgreSQL prints it).
    where.push(`${column} = $${params.length - 1} AND ${column}::text = $${params.length}`);
  }
  if (after) {
    const placeholders = after.map((part) => {
      params.push(part);
      return `$${params.length}`;
    });
    where.push(`(${keyColumns.join(", ")}) > (${placeholders.join(", ")})`);
  }
  params.push(limit);
  const sql = `SELECT ${plan.columns.map((c) => `t.${quote(c.name)}`).join(", ")}, ${keyColumns.map((k) => `${k}::text`).join(", ")}
    FROM ${quote(plan.schema)}.${quote(plan.name)} AS t
    ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY ${keyColumns.join(", ")} LIMIT $${params.length}`;

  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new UpstreamCallError(
      503,
      "upstream_unavailable",
      `PostgreSQL is unreachable: ${(error as Error).message}`,
    );
  }
  let rows: string[][];
  let snapshot: string;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    // The transaction's snapshot is taken by its first statement: this one.
    const taken = await client.query<{ snapshot: string }>("SELECT pg_current_snapshot()::text AS snapshot");
    snapshot = taken.rows[0]!.snapshot;
    try {
      const result = await client.query<string[]>({
        text: sql,
        values: params,
        rowMode: "array",
        types: RAW_TEXT,
      });
      rows = result.rows;
    } catch (error) {
      if (!isDataException(error) || tenant === undefined) throw error;
      rows = [];
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    if (error instanceof UpstreamCallError) throw error;
    if (!isConnectionError(error)) throw error;
    throw new UpstreamCallError(
      503,
      "upstream_unavailable",
      `snapshot read failed: ${(error as Error).message}`,
    );
  }
  client.release();

  const width = plan.columns.length;
  const decoded = rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < width; i++) {
      const text = values[i];
      row[plan.columns[i]!.name] =
        text === null || text === undefined ? null : plan.columns[i]!.codec.decode(text);
    }
    return row;
  });
  const last = rows[rows.length - 1];
  return {
    watermark: snapshotWatermark(buffer, snapshot),
    rows: decoded,
    nextCursor: rows.length === limit && last ? encodeCursor(last.slice(width) as string[]) : null,
  };
}
