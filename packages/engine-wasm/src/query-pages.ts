import { PagePace, type QueryPagesOptions } from "./page-pace.js";
import { RangeSizes } from "./range-sizes.js";
import { ResetPages } from "./reset-pages.js";

export type { QueryPagesOptions };

/**
 * The pull stopped between two pages of a query's root or a reset (see `QueryPages`): its transaction is
 * rolled back, and the caller runs it again, with the same `QueryPages`, after other requests
 * had their turn.
 */
export class QueryPageTurn extends Error {
  constructor() {
    super("weir: a pull gives other requests their turn between its pages");
    this.name = "QueryPageTurn";
  }
}

/** One query's pages so far: the root's rows they kept (JSON arrays of keys), and where they end. */
interface Paged {
  kept: string[];
  /** The last key read (a JSON array); "" before the first page. */
  after: string;
  done: boolean;
}

// A first page of one row: a root row can cost a probe of a whole table, so a pull's first page
// learns the rate before a larger one is read (each page at most four times the last).
const FIRST_PAGE_ROWS = 1;
// A reset's rows cost a rendering each: its first page reads more.
const FIRST_RESET_ROWS = 64;

/**
 * One pull's paging, kept across its runs. A query whose root's condition holds an
 * EXISTS (where a probe per root row can make one statement hold the thread for long) has its
 * root read a page of its table at a time, in key order (assembly/query/pages.ts); a plain pull
 * that resets reads its rows a page of a table at a time too (`reset`, ResetPages). Between
 * pages, once the call has run `pageMs`, the pull stops (`QueryPageTurn`), and the caller runs
 * it again after a turn of the event loop. A query's pages are kept here, by query and plan,
 * while the namespace stays at the version they were read at (a run that finds another version
 * reads them again), so each run goes further, and the last one evaluates each query over the
 * rows its pages kept. The work budget counts every run's time (WorkMeter). Only drivers that
 * let SQL call back into JavaScript page (`SqlAdapter.defineFunction`).
 */
export class QueryPages {
  /** Pages read, and the runs stopped between pages, over the pull's runs. */
  pages = 0;
  /** Probe rows the pull's runs before the current one examined. */
  rows = 0;
  turns = 0;
  /** Time each query's evaluation took over the pull's runs (the meter's, by query hash). */
  readonly spent = new Map<string, number>();
  /** A plain pull's reset, read in pages. */
  readonly reset: ResetPages;
  private readonly queries = new Map<string, Paged>();
  private watermark = "";
  private readonly pace: PagePace;

  /** The rows each query's ranges read, learnt from their steps' time (the namespace's, or the pull's own). */
  readonly ranges: RangeSizes;

  constructor(options: QueryPagesOptions) {
    this.ranges = options.ranges ?? new RangeSizes();
    this.pace = new PagePace(options, FIRST_PAGE_ROWS);
    this.reset = new ResetPages(new PagePace(options, FIRST_RESET_ROWS), () => this.turn());
  }

  /** The current run was stopped between pages (a driver may wrap the error thrown). */
  stopped = false;

  /** A run of the pull begins. */
  begin(): void {
    this.stopped = false;
    this.pace.begin();
    this.reset.begin();
  }

  /** `_weir_pages`: "1" when the query's pages are all read, else "<size> <after>" for the next. */
  state(hash: string, plan: string, watermark: string): string {
    if (watermark !== this.watermark) {
      this.queries.clear();
      this.watermark = watermark;
    }
    const paged = this.paged(hash, plan);
    if (paged.done) return "1";
    this.pace.pageStarts();
    return `${this.pace.size} ${paged.after}`;
  }

  /** `_weir_paged`: keeps a page's rows; when the next page would pass the run's time, stops the pull. */
  kept(hash: string, plan: string, last: string | null, keys: string): void {
    const paged = this.paged(hash, plan);
    if (keys !== "[]") paged.kept.push(keys.slice(1, -1));
    if (last === null) paged.done = true;
    else paged.after = last;
    this.pages++;
    if (this.pace.pageEnded() && !paged.done) this.turn();
  }

  /** `_weir_page_keys`: the keys of the root rows the query's pages kept, as one JSON array. */
  keys(hash: string, plan: string): string {
    return `[${this.paged(hash, plan).kept.join(",")}]`;
  }

  /**
   * A range of the group's query passed its step's budget: its ranges read half as many rows, and the run
   * stops, to be run again after a turn. False when they read their fewest already (the query is
   * refused past its budget).
   */
  rangeTurn(group: string, hash: string): boolean {
    if (!this.ranges.halve(group, hash)) return false;
    this.turns++;
    this.stopped = true;
    return true;
  }

  private turn(): never {
    this.turns++;
    this.stopped = true;
    throw new QueryPageTurn();
  }

  private paged(hash: string, plan: string): Paged {
    const key = `${hash}\n${plan}`;
    let paged = this.queries.get(key);
    if (!paged) {
      paged = { kept: [], after: "", done: false };
      this.queries.set(key, paged);
    }
    return paged;
  }
}
