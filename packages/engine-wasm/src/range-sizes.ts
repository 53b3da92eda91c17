import { RANGE_ROWS } from "./abi.js";

/** The fewest a range is cut to: one of these that passes its step's budget refuses the query. */
const FEWEST_RANGE_ROWS = 32;
/** Queries whose ranges are kept smaller, at most: past it the sizes learnt are forgotten. */
const MOST_KEPT = 4096;

/**
 * The rows each query's ranges read (by client group and query hash: one user's queries do not
 * size another's), learnt from their steps' time. A range that
 * passes its step's budget (a machine other work loads, a query whose rows cost more than most)
 * is read again half as large, the pull's run stopped and run again (QueryPages.rangeTurn), where
 * it refused the query; one whose step takes less than a quarter of the budget lets the next read
 * twice as many, up to RANGE_ROWS. A namespace keeps one across its pulls (QueryPagesOptions).
 */
export class RangeSizes {
  private readonly rows = new Map<string, number>();

  /** Root rows the group's query's next range reads. */
  of(group: string, hash: string): number {
    return this.rows.get(key(group, hash)) ?? RANGE_ROWS;
  }

  /** Halves the group's query's ranges; false when they read their fewest rows already. */
  halve(group: string, hash: string): boolean {
    const rows = this.of(group, hash);
    if (rows <= FEWEST_RANGE_ROWS) return false;
    const at = key(group, hash);
    if (!this.rows.has(at) && this.rows.size >= MOST_KEPT) this.rows.clear();
    this.rows.set(at, rows / 2);
    return true;
  }

  /** Doubles the group's query's ranges, up to RANGE_ROWS. */
  double(group: string, hash: string): void {
    const at = key(group, hash);
    const rows = this.rows.get(at);
    if (rows === undefined) return;
    if (rows * 2 >= RANGE_ROWS) this.rows.delete(at);
    else this.rows.set(at, rows * 2);
  }
}

const key = (group: string, hash: string) => JSON.stringify([group, hash]);
