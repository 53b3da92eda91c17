import { RANGE_ROWS } from "./abi.js";

/** The fewest a range is cut to: one of these that passes its step's budget refuses the query. */
const FEWEST_RANGE_ROWS = 32;
/** Queries whose ranges are kept smaller, at most: past it the sizes learnt are forgotten. */
const MOST_KEPT = 4096;

/**
 * The rows each query's ranges read (by query hash), learnt from their steps' time. A range that
 * passes its step's budget (a machine other work loads, a query whose rows cost more than most)
 * is read again half as large, the pull's run stopped and run again (QueryPages.rangeTurn), where
 * it refused the query; one whose step takes less than a quarter of the budget lets the next read
 * twice as many, up to RANGE_ROWS. A namespace keeps one across its pulls (QueryPagesOptions).
 */
export class RangeSizes {
  private readonly rows = new Map<string, number>();

  /** Root rows the query's next range reads. */
  of(hash: string): number {
    return this.rows.get(hash) ?? RANGE_ROWS;
  }

  /** Halves the query's ranges; false when they read their fewest rows already. */
  halve(hash: string): boolean {
    const rows = this.of(hash);
    if (rows <= FEWEST_RANGE_ROWS) return false;
    if (!this.rows.has(hash) && this.rows.size >= MOST_KEPT) this.rows.clear();
    this.rows.set(hash, rows / 2);
    return true;
  }

  /** Doubles the query's ranges, up to RANGE_ROWS. */
  double(hash: string): void {
    const rows = this.rows.get(hash);
    if (rows === undefined) return;
    if (rows * 2 >= RANGE_ROWS) this.rows.delete(hash);
    else this.rows.set(hash, rows * 2);
  }
}
