/**
 * The pull stopped between two pages of a query's root (see `QueryPages`): its transaction is
 * rolled back, and the caller runs it again, with the same `QueryPages`, after other requests
 * had their turn.
 */
export class QueryPageTurn extends Error {
  constructor() {
    super("weir: a query's evaluation gives other requests their turn between its pages");
    this.name = "QueryPageTurn";
  }
}

/** How a query-aware pull's roots are read in pages. */
export interface QueryPagesOptions {
  /**
   * How long the pull aims to hold the thread before it gives other requests their turn: once a
   * call has run this long, it stops after the page it is in (`QueryPageTurn`). 0: after
   * every page.
   */
  pageMs: number;
  /** Root rows a page reads; default: sized from what the pages before took, for `pageMs` / 2. */
  pageRows?: number;
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
const MAX_PAGE_ROWS = 65_536;

/**
 * One query-aware pull's paging, kept across its runs. A query whose root's condition holds an
 * EXISTS (where a probe per root row can make one statement hold the thread for long) has its
 * root read a page of its table at a time, in key order (assembly/query/pages.ts); between
 * pages, once the call has run `pageMs`, the pull stops (`QueryPageTurn`), and the caller runs
 * it again after a turn of the event loop. The pages read are kept here, by query and plan,
 * while the namespace stays at the version they were read at (a run that finds another version
 * reads them again), so each run goes further, and the last one evaluates each query over the
 * rows its pages kept. The work budget counts every run's time (WorkMeter). Only drivers that
 * let SQL call back into JavaScript page (`SqlAdapter.defineFunction`).
 */
export class QueryPages {
  /** Pages read, and the runs stopped between pages, over the pull's runs. */
  pages = 0;
  turns = 0;
  /** Time each query's evaluation took over the pull's runs (the meter's, by query hash). */
  readonly spent = new Map<string, number>();
  private readonly queries = new Map<string, Paged>();
  private watermark = "";
  private runStarted = 0;
  private pageStarted = 0;
  private size: number;

  constructor(private readonly options: QueryPagesOptions) {
    this.size = options.pageRows ?? FIRST_PAGE_ROWS;
  }

  /** The current run was stopped between pages (a driver may wrap the error thrown). */
  stopped = false;

  /** A run of the pull begins. */
  begin(): void {
    this.runStarted = performance.now();
    this.stopped = false;
  }

  /** `_weir_pages`: "1" when the query's pages are all read, else "<size> <after>" for the next. */
  state(hash: string, plan: string, watermark: string): string {
    if (watermark !== this.watermark) {
      this.queries.clear();
      this.watermark = watermark;
    }
    const paged = this.paged(hash, plan);
    if (paged.done) return "1";
    this.pageStarted = performance.now();
    return `${this.size} ${paged.after}`;
  }

  /** `_weir_paged`: keeps a page's rows; when the next page would pass the run's time, stops the pull. */
  kept(hash: string, plan: string, last: string | null, keys: string): void {
    const paged = this.paged(hash, plan);
    if (keys !== "[]") paged.kept.push(keys.slice(1, -1));
    if (last === null) paged.done = true;
    else paged.after = last;
    this.pages++;
    const now = performance.now();
    const pageMs = now - this.pageStarted;
    const rows = this.size;
    this.learn(pageMs);
    // The run stops once the next page, at this one's pace, would end past its time: a run
    // holds the thread about `pageMs`, not that and a page more (a page of one row can take
    // milliseconds when each row probes a table).
    const nextMs = (pageMs * this.size) / rows;
    const ran = now - this.runStarted;
    if (!paged.done && (ran >= this.options.pageMs || ran + nextMs > this.options.pageMs)) {
      this.turns++;
      this.stopped = true;
      throw new QueryPageTurn();
    }
  }

  /** `_weir_page_keys`: the keys of the root rows the query's pages kept, as one JSON array. */
  keys(hash: string, plan: string): string {
    return `[${this.paged(hash, plan).kept.join(",")}]`;
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

  /** The next page's size, for half the run's time at the rate this page read. */
  private learn(ms: number): void {
    if (this.options.pageRows !== undefined) return;
    const target = this.options.pageMs / 2;
    const scaled = ms > 0 ? Math.floor((this.size * target) / ms) : this.size * 4;
    this.size = Math.max(1, Math.min(MAX_PAGE_ROWS, this.size * 4, scaled));
  }
}
