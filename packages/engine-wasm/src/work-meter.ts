import { RANGE_ROWS } from "./abi.js";
import type { QueryPages } from "./query-pages.js";
import type { SqlAdapter, SqlValue } from "./types.js";

/** Probe rows between two reads of the clock (a read costs more than a probe row's count). */
const ROWS_PER_CHECK = 1024;
/** What `_weir_answer_left` answers for an answer without a time (SQLite has no infinity). */
const ANSWER_UNLIMITED_MS = 1e12;

/** A client group's query whose range the engine reads (`_weir_range_rows`). */
interface RangeOf {
  group: string;
  hash: string;
}

/** The query whose evaluation passed its budget, as a refusal names it. */
export interface MeteredQuery {
  hash: string;
  name: string | null;
}

/**
 * Meters a pull's query evaluations while SQLite runs them, through two SQL functions the engine
 * writes into its statements: `_weir_query(hash, name, spent)` before each evaluation (its budget starts
 * anew, less the ms `spent` in earlier calls: a query evaluated in ranges over several pulls, whose
 * total the engine reads back by `_weir_query_spent()`) and `_weir_work(column)` as the first term of every EXISTS probe (and of the root of a
 * query without one), related subquery and EXISTS witness, for each row it examines. Past the budget the function throws, which fails the statement at once: a query is
 * refused after its budget, not run to its end. Only drivers that let SQL call back into
 * JavaScript (better-sqlite3, sql.js; `SqlAdapter.defineFunction`) are metered.
 */
export class WorkMeter {
  /** `clock`: the ms clock it times evaluations by (a test's own). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Probe rows examined in the current call. */
  rows = 0;
  /** The query that passed its budget in the current call (null: none did). */
  exceeded: MeteredQuery | null = null;
  private budgetMs = Number.POSITIVE_INFINITY;
  private totalMs = Number.POSITIVE_INFINITY;
  /** Where the current query's time starts: its earlier ranges', pages' and runs' included. */
  private startedAt = 0;
  /** When the current query's evaluation in this call began (its step). */
  private stepStartedAt = 0;
  /** Whether the query that passed a budget passed its total (else a step's). */
  private passedTotal = false;
  /** When the current call began, and how long its answer may take (`_weir_answer_left`). */
  private callStartedAt = 0;
  private answerMs = Number.POSITIVE_INFINITY;
  private current: MeteredQuery | null = null;
  private readonly defined = new WeakSet<SqlAdapter>();
  /** The current call's paging (null: its queries are read whole). */
  private pages: QueryPages | null = null;
  /** The query whose range the engine asked the rows of (`_weir_range_rows`), until its evaluation begins. */
  private nextRange: RangeOf | null = null;
  /** The query whose range the current evaluation reads (null: it reads no range). */
  private range: RangeOf | null = null;

  /** Defines the functions on `db` once; false when its driver cannot (then nothing is metered). */
  attach(db: SqlAdapter): boolean {
    if (this.defined.has(db)) return true;
    if (!db.defineFunction) return false;
    // Declared with the arity the SQL calls them with (sql.js takes a function's length as it).
    db.defineFunction("_weir_work", (_row) => this.tick());
    db.defineFunction("_weir_query", (hash, name, spent) => this.query(hash, name, Number(spent)));
    db.defineFunction("_weir_query_spent", () => this.clock() - this.startedAt);
    // The ms the call's answer has left (negative past it; a large number for no limit).
    db.defineFunction("_weir_answer_left", () =>
      Math.min(ANSWER_UNLIMITED_MS, this.answerMs - (this.clock() - this.callStartedAt)),
    );
    // Root rows a query's next range reads (RangeSizes, where the call pages); the evaluation
    // the engine begins next is that range's, and timed as one.
    db.defineFunction("_weir_range_rows", (group, hash) => {
      this.nextRange = { group: String(group), hash: String(hash) };
      return this.pages ? this.pages.ranges.of(this.nextRange.group, this.nextRange.hash) : RANGE_ROWS;
    });
    // A query's root read in pages (QueryPages), where the call pages.
    db.defineFunction("_weir_pages", (hash, plan, watermark) =>
      this.pages ? this.pages.state(String(hash), String(plan), String(watermark)) : "0",
    );
    db.defineFunction("_weir_paged", (hash, plan, last, keys) => {
      this.pages!.kept(String(hash), String(plan), last === null ? null : String(last), String(keys));
      return 1;
    });
    db.defineFunction("_weir_page_keys", (hash, plan) => this.pages!.keys(String(hash), String(plan)));
    // A plain pull's reset read in pages (ResetPages), where the call pages.
    db.defineFunction("_weir_reset_pages", (watermark, floor, tables) =>
      this.pages ? this.pages.reset.state(Number(watermark), Number(floor), Number(tables)) : "0",
    );
    db.defineFunction("_weir_reset_page", (last, count, rows) => {
      this.pages!.reset.kept(
        last === null ? null : String(last),
        Number(count),
        rows === null ? null : String(rows),
      );
      return 1;
    });
    this.defined.add(db);
    return true;
  }

  /**
   * Starts a call whose evaluations may each take `budgetMs` in the call, and `totalMs` with the
   * time each query took in earlier calls (its earlier ranges, a paging pull's earlier runs);
   * `pages`: the call reads roots in pages, and is a run of a pull whose earlier runs' time each
   * query's total counts;
   * `answerMs`: how long the call's answer may take: it evaluates no more deferred queries and
   * renders no more rows once the next would end past it (assembly/query/limits.ts, AnswerPace).
   */
  begin(budgetMs: number, pages: QueryPages | null = null, answerMs = budgetMs, totalMs = budgetMs): void {
    this.rows = 0;
    this.exceeded = null;
    this.passedTotal = false;
    this.current = null;
    this.budgetMs = budgetMs;
    this.totalMs = Math.max(budgetMs, totalMs);
    this.answerMs = answerMs;
    this.pages = pages;
    pages?.begin();
    this.startedAt = this.stepStartedAt = this.callStartedAt = this.clock();
  }

  /** Whether the call was stopped between the pages of a query (QueryPages). */
  turned(): boolean {
    return this.pages?.stopped === true;
  }

  /** Probe rows the pull examined: in this call and, when it pages, in its runs before. */
  totalRows(): number {
    return this.rows + (this.pages?.rows ?? 0);
  }

  /** Ends the call: the time of the query it was in, and its rows, count toward the pull's next run. */
  end(): void {
    this.rangeEnded();
    this.nextRange = null;
    this.spend();
    if (this.pages) this.pages.rows += this.rows;
    this.pages = null;
    this.current = null;
  }

  private query(hash: SqlValue, name: SqlValue, spent: number): number {
    this.rangeEnded();
    this.spend();
    this.current = { hash: String(hash), name: name === null ? null : String(name) };
    this.range = this.nextRange?.hash === this.current.hash ? this.nextRange : null;
    this.nextRange = null;
    // Its time so far: the engine's count of its earlier ranges (`spent`), or this pull's earlier
    // runs' and calls' (`pages`), which include that count once they ran it: the larger, not
    // their sum (which counted a query's earlier ranges in a pull twice, then twice again).
    this.stepStartedAt = this.clock();
    this.startedAt = this.stepStartedAt - Math.max(this.pages?.spent.get(this.current.hash) ?? 0, spent);
    return 1;
  }

  /** Keeps the current query's time so far for the pull's later runs (when it pages). */
  private spend(): void {
    if (this.pages && this.current) this.pages.spent.set(this.current.hash, this.clock() - this.startedAt);
  }

  /** A range's evaluation ended within a quarter of its budget: the query's next may read more. */
  private rangeEnded(): void {
    if (this.range !== null && this.pages && this.clock() - this.stepStartedAt < this.budgetMs / 4)
      this.pages.ranges.double(this.range.group, this.range.hash);
    this.range = null;
  }

  private tick(): number {
    if (++this.rows % ROWS_PER_CHECK !== 0) return 1;
    const now = this.clock();
    const step = now - this.stepStartedAt > this.budgetMs;
    // A range past its step's budget is read again smaller, in a run of the pull after a turn
    // (QueryPages.rangeTurn), unless its ranges read their fewest rows already.
    if (step && this.range !== null && this.pages?.rangeTurn(this.range.group, this.range.hash)) {
      this.range = null;
      throw new Error("weir: a range passed its step's budget, to be read again smaller");
    }
    if (step || now - this.startedAt > this.totalMs) {
      this.exceeded = this.current ?? { hash: "", name: null };
      this.passedTotal = !step;
      throw new Error("weir: query work budget passed");
    }
    return 1;
  }

  /** The refusal's message. */
  message(): string {
    const query = this.exceeded;
    const named = query?.name ? `query ${query.name}` : "a query of the group";
    const hash = query?.hash ? ` (${query.hash})` : "";
    if (this.passedTotal) {
      return (
        `${named}${hash} passed its total work budget of ${this.totalMs} ms over the ranges and pages it ` +
        `was read in (${this.totalRows()} rows examined) and was stopped: narrow its conditions, ` +
        "give it an index, or raise the server's queryTotalBudgetMs"
      );
    }
    return (
      `${named}${hash} passed its work budget of ${this.budgetMs} ms (${this.totalRows()} rows examined) ` +
      "and was stopped: narrow its conditions, give it an index, or raise the server's queryBudgetMs"
    );
  }
}
