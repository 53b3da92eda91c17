import type { UpstreamChange, UpstreamSource } from "@weir/protocol";

/**
 * A namespace as weir would keep it, reduced to its rows: snapshot pages are put, then changes
 * are applied in order. Rows are keyed by their primary key's JSON.
 */
export class NamespaceModel {
  readonly tables = new Map<string, Map<string, Record<string, unknown>>>();
  watermark = 0n;

  constructor(private readonly primaryKeys: Record<string, string[]>) {}

  private table(name: string): Map<string, Record<string, unknown>> {
    let rows = this.tables.get(name);
    if (!rows) {
      rows = new Map();
      this.tables.set(name, rows);
    }
    return rows;
  }

  key(table: string, row: Record<string, unknown>): string {
    return JSON.stringify(this.primaryKeys[table]!.map((column) => row[column]));
  }

  put(table: string, row: Record<string, unknown>): void {
    this.table(table).set(this.key(table, row), row);
  }

  apply(change: UpstreamChange): void {
    const rows = this.table(change.tableName);
    switch (change.op) {
      case "TRUNCATE":
        rows.clear();
        return;
      case "DELETE":
        rows.delete(this.key(change.tableName, change.oldData!));
        return;
      default:
        if (change.oldData) rows.delete(this.key(change.tableName, change.oldData));
        this.put(change.tableName, change.rowData!);
    }
  }

  /** Reads every table whole, then catches up from the first page's watermark. */
  async snapshot(source: UpstreamSource, tables: string[], limit = 1000): Promise<void> {
    let first: bigint | null = null;
    for (const table of tables) {
      this.table(table).clear();
      let cursor: string | null = null;
      do {
        const page = await source.snapshotPage(table, cursor, limit);
        first ??= page.watermark;
        for (const row of page.rows) this.put(table, row);
        cursor = page.nextCursor;
      } while (cursor !== null);
    }
    this.watermark = first!;
    await this.catchUp(source);
  }

  /** Applies changes until caught up; answers the pages read. */
  async catchUp(source: UpstreamSource, limit = 1000): Promise<ChangesRead> {
    const pages: ChangesRead = [];
    for (;;) {
      const page = await source.changes(this.watermark, limit);
      for (const change of page.changes) this.apply(change);
      const advanced = page.watermark !== this.watermark;
      this.watermark = page.watermark;
      if (page.changes.length === 0 && !advanced) return pages;
      pages.push(page);
    }
  }

  /** The rows in primary-key order (numbers by value, anything else by its JSON). */
  rows(table: string): Record<string, unknown>[] {
    return sortByKey([...this.table(table).values()], this.primaryKeys[table]!);
  }
}

type ChangesRead = { watermark: bigint; changes: UpstreamChange[] }[];

/** Polls `check` until it answers true (every 20 ms, up to `timeoutMs`). */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Rows sorted by `key` as the model sorts them, to compare with what PostgreSQL holds. */
export function sortByKey<T extends Record<string, unknown>>(rows: T[], key: string[]): T[] {
  return [...rows].sort((a, b) => {
    for (const column of key) {
      const order = compare(a[column], b[column]);
      if (order !== 0) return order;
    }
    return 0;
  });
}
