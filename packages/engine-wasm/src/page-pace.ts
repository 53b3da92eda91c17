import type { RangeSizes } from "./range-sizes.js";

/** How a pull's pages are read: a query's root, or a reset (QueryPages). */
export interface QueryPagesOptions {
  /**
   * How long the pull aims to hold the thread before it gives other requests their turn: once a
   * call has run this long, it stops after the page it is in (`QueryPageTurn`). 0: after
   * every page.
   */
  pageMs: number;
  /** Rows a page reads; default: sized from what the pages before took, for `pageMs` / 2. */
  pageRows?: number;
  /**
   * The rows each query's ranges read, learnt by the pulls before (a namespace keeps one);
   * default: the pull's own, from RANGE_ROWS.
   */
  ranges?: RangeSizes;
}

const MAX_PAGE_ROWS = 65_536;

/**
 * How big a pull's pages are, and when a run of the pull stops between them: each page is sized
 * from the pace of the one before, for half the run's time (at most four times the last), and a
 * run stops once the next page, at that pace, would end past the run's `pageMs`.
 */
export class PagePace {
  /** The next page's rows. */
  size: number;
  private runStarted = 0;
  private pageStarted = 0;

  constructor(
    private readonly options: QueryPagesOptions,
    firstRows: number,
  ) {
    this.size = options.pageRows ?? firstRows;
  }

  /** A run of the pull begins. */
  begin(): void {
    this.runStarted = performance.now();
  }

  /** The next page begins. */
  pageStarts(): void {
    this.pageStarted = performance.now();
  }

  /**
   * The page ended: learns the next page's size, and answers whether the run stops before it (a
   * run holds the thread about `pageMs`, not that and a page more).
   */
  pageEnded(): boolean {
    const now = performance.now();
    const pageMs = now - this.pageStarted;
    const rows = this.size;
    this.learn(pageMs);
    const nextMs = (pageMs * this.size) / rows;
    const ran = now - this.runStarted;
    return ran >= this.options.pageMs || ran + nextMs > this.options.pageMs;
  }

  private learn(ms: number): void {
    if (this.options.pageRows !== undefined) return;
    const target = this.options.pageMs / 2;
    const scaled = ms > 0 ? Math.floor((this.size * target) / ms) : this.size * 4;
    this.size = Math.max(1, Math.min(MAX_PAGE_ROWS, this.size * 4, scaled));
  }
}
