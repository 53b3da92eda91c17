import { COLUMN_SEPARATOR, ROW_SEPARATOR } from "./abi.js";
import type { EngineHost } from "./engine-module.js";
import type { SqlAdapter, SqlValue } from "./types.js";
import { isPlaceholder, rowsText } from "./wire-text.js";

const EMPTY_PARAMS = "[]";

/**
 * What the engine imports: the namespace database of the current call, reached by statement
 * number (see assembly/host.ts). Statements are registered once and named by number from then
 * on; row payloads a query answers stay here, on the host side, until the call's result is put
 * together.
 */
export class SqlBridge implements EngineHost {
  private db: SqlAdapter | null = null;
  private extras: readonly SqlValue[] = [];
  /** Statements the engine registered, by number, and the numbers by text. */
  private readonly sqlTexts: string[] = [];
  private readonly sqlIDs = new Map<string, number>();
  /** Row payloads of the current call's `queryPayload`. */
  payloads: string[] = [];
  /** Or the current call's payloads joined by commas (`queryJoinedPayloads`). */
  joined: string | null = null;
  /** How many of the joined payloads are dels (the query's third column; else none). */
  joinedDels = 0;

  /** Starts a call on `db`, whose extra parameters are `extras`. Calls cannot nest. */
  enter(db: SqlAdapter, extras: readonly SqlValue[]): void {
    if (this.db) throw new Error("the engine is already in a call: engine calls cannot nest");
    this.db = db;
    this.extras = extras;
  }

  leave(): void {
    this.db = null;
    this.extras = [];
    this.payloads = [];
    this.joined = null;
    this.joinedDels = 0;
  }

  private current(): SqlAdapter {
    if (!this.db) throw new Error("the engine called its host outside of a call");
    return this.db;
  }

  prepare(sql: string): number {
    let id = this.sqlIDs.get(sql);
    if (id === undefined) {
      id = this.sqlTexts.push(sql) - 1;
      this.sqlIDs.set(sql, id);
    }
    return id;
  }

  query(statement: number, params: string): string {
    return rowsText(this.current().query(this.sqlTexts[statement]!, this.bind(params)));
  }

  /**
   * Keeps each row's last column (NULL rows are dropped) after those the call kept before (an
   * answer rendered a page at a time), and answers the other columns.
   */
  queryPayload(statement: number, params: string): string {
    const rows = this.current().query(this.sqlTexts[statement]!, this.bind(params));
    const { payloads } = this;
    const lines: string[] = [];
    for (const row of rows) {
      const payload = row[row.length - 1];
      if (payload === null || payload === undefined) continue;
      payloads.push(String(payload));
      lines.push(row.length === 2 ? String(row[0]) : row.slice(0, -1).join(COLUMN_SEPARATOR));
    }
    return lines.join(ROW_SEPARATOR);
  }

  /**
   * Keeps the joined payloads of a (count, joined text[, dels]) row and answers the count; a
   * negative count keeps nothing (the engine answers otherwise).
   */
  queryJoinedPayloads(statement: number, params: string): number {
    const row = this.current().query(this.sqlTexts[statement]!, this.bind(params))[0];
    const count = Number(row?.[0] ?? 0);
    this.joined = count > 0 ? String(row![1]) : count === 0 ? "" : null;
    this.joinedDels = count > 0 && row!.length > 2 ? Number(row![2]) : 0;
    return count;
  }

  exec(statement: number, params: string): number {
    return this.current().exec(this.sqlTexts[statement]!, this.bind(params));
  }

  private bind(params: string): SqlValue[] {
    if (params === EMPTY_PARAMS) return [];
    const values = JSON.parse(params) as unknown[];
    // Parameters without an object (no "{" anywhere) hold no placeholder: the hot statements'.
    if (!params.includes("{")) return values as SqlValue[];
    return values.map((value) => (isPlaceholder(value) ? this.extras[value.$]! : (value as SqlValue)));
  }
}
