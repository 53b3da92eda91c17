import type { PagePace } from "./page-pace.js";

/**
 * A reset pull's rows, read a page of a table at a time over the pull's runs
 * (assembly/pull-reset-pages.ts): the rows each page rendered, kept here in order, and where the
 * next page starts. The first page's version is where the run that has read them all catches
 * them up from, through the change log; should the log no longer reach back to it (retention
 * raised the floor past it), the pages are read again.
 */
export class ResetPages {
  /** The rows the pages rendered so far. */
  rows = 0;
  /** Whether a call answered from the pages (they were all read). */
  answered = false;
  /** The pages' rows, joined by commas as they come (concatenation, not a copy of them all). */
  private text = "";
  /** The version the first page was read at (-1: none read yet). */
  private since = -1;
  private table = 0;
  private after = "";
  private done = false;
  private tables = 0;

  constructor(
    private readonly pace: PagePace,
    private readonly stop: () => never,
  ) {}

  /** A run of the pull begins. */
  begin(): void {
    this.pace.begin();
  }

  /**
   * `_weir_reset_pages`: "done <since> <rows>" once every page is read, else
   * "<table> <size> <after>" for the next page (`after`: the last key read, a JSON array, or
   * nothing before a table's first page).
   */
  state(watermark: number, floor: number, tables: number): string {
    this.tables = tables;
    if (this.since >= 0 && this.since < floor) this.restart();
    if (this.since < 0) {
      this.since = watermark;
      if (tables === 0) this.done = true;
    }
    if (this.done) {
      this.answered = true;
      return `done ${this.since} ${this.rows}`;
    }
    this.pace.pageStarts();
    return `${this.table} ${this.pace.size} ${this.after}`;
  }

  /** `_weir_reset_page`: keeps a page's rows; when the next page would pass the run's time, stops the pull. */
  kept(last: string | null, count: number, rows: string | null): void {
    if (count > 0 && rows !== null) {
      this.text = this.rows > 0 ? `${this.text},${rows}` : rows;
      this.rows += count;
    }
    if (last !== null) this.after = last;
    else {
      this.after = "";
      if (++this.table >= this.tables) this.done = true;
    }
    if (this.pace.pageEnded() && !this.done) this.stop();
  }

  /** The rows the pages rendered, joined by commas. */
  joined(): string {
    return this.text;
  }

  private restart(): void {
    this.text = "";
    this.rows = 0;
    this.since = -1;
    this.table = 0;
    this.after = "";
    this.done = false;
  }
}
