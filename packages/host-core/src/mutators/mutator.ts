import type { SqlValue } from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";

/** A row as mutators read and write it: column name to value, in the wire form of its type. */
export type Row = Record<string, unknown>;

/** A primary key: the value of a one-column key, or an object of every key column. */
export type RowKey = string | number | bigint | Record<string, unknown>;

/**
 * What a mutator writes through. Every call runs in the mutation's transaction; all of it rolls
 * back when the mutator throws.
 */
export interface MutatorTx {
  readonly claims: Claims;
  readonly clientID: string;
  /** The row of `table` with that key, or undefined. */
  get(table: string, key: RowKey): Row | undefined;
  /** Inserts a row; a row with the same key already there is a conflict (an application error). */
  insert(table: string, row: Row): void;
  /** Updates the given columns of the row with that key; answers false when there is no such row. */
  update(table: string, row: Row): boolean;
  /** Inserts the row, or updates the given columns of the existing one. */
  upsert(table: string, row: Row): void;
  /** Deletes the row with that key; answers false when there was none. */
  delete(table: string, key: RowKey): boolean;
  /** Runs SQL that returns rows, with `?` parameters bound in order; rows are arrays of column values. */
  query(sql: string, params?: readonly SqlValue[]): SqlValue[][];
  /** Runs SQL that returns no rows; answers how many rows it changed. */
  exec(sql: string, params?: readonly SqlValue[]): number;
  /** Queues an effect (an email, a webhook) to run only after the mutation commits. */
  defer(effect: () => void | Promise<void>): void;
}

export interface MutatorContext {
  namespace: string;
  claims: Claims;
  clientGroupID: string;
  clientID: string;
  mutationID: number;
  timestamp?: number;
}

/**
 * A named mutator. It is synchronous because SQLite transactions are: a mutator returning a
 * Promise is refused. (Declared as a method so that a mutator may type its `args` narrowly.)
 */
export type Mutator = {
  bivariant(tx: MutatorTx, args: unknown, ctx: MutatorContext): void;
}["bivariant"];
