import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import initSqlJs from "sql.js";
import { betterSqliteAdapter } from "../src/better-sqlite3-adapter.js";
import { Engine, type EngineOptions } from "../src/engine.js";
import { engineWasmUrl, leanEngineWasmUrl } from "../src/engine-wasm-url.js";
import { sqlJsAdapter } from "../src/sql-js-adapter.js";
import type { SqlAdapter } from "../src/types.js";

/** A namespace database as a host holds it: the adapter, a transaction runner, and raw SQL. */
export interface TestDatabase {
  kind: "better-sqlite3" | "sql.js";
  adapter: SqlAdapter;
  transaction<T>(fn: () => T): T;
  /** SQLite's count of rows changed since the connection opened. */
  totalChanges(): number;
  close(): void;
}

const wasm = readFileSync(engineWasmUrl);
let engine: Promise<Engine> | undefined;

export function testEngine(): Promise<Engine> {
  engine ??= Engine.load(wasm);
  return engine;
}

const leanWasm = readFileSync(leanEngineWasmUrl);
let leanEngine: Promise<Engine> | undefined;

/** The lean build (no query engine), one instance shared as `testEngine`'s. */
export function leanTestEngine(): Promise<Engine> {
  leanEngine ??= Engine.load(leanWasm);
  return leanEngine;
}

/** Both builds of the engine: what a plain namespace does must not depend on which it runs. */
const ENGINES = [
  { build: "full", load: testEngine },
  { build: "lean", load: leanTestEngine },
] as const;

export function freshEngine(options: EngineOptions = {}): Promise<Engine> {
  return Engine.load(wasm, options);
}

export function openBetterSqlite(file = ":memory:"): TestDatabase {
  const db = new Database(file);
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  const adapter = betterSqliteAdapter(db);
  return {
    kind: "better-sqlite3",
    adapter,
    transaction: (fn) => db.transaction(fn)(),
    totalChanges: () => db.prepare("SELECT total_changes()").pluck().get() as number,
    close: () => db.close(),
  };
}

const SQL = await initSqlJs();

export function openSqlJs(bytes?: Uint8Array): TestDatabase & { export(): Uint8Array } {
  const db = new SQL.Database(bytes);
  const adapter = sqlJsAdapter(db);
  return {
    kind: "sql.js",
    adapter,
    transaction<T>(fn: () => T): T {
      db.run("BEGIN");
      try {
        const result = fn();
        db.run("COMMIT");
        return result;
      } catch (error) {
        db.run("ROLLBACK");
        throw error;
      }
    },
    totalChanges: () => db.exec("SELECT total_changes()")[0]!.values[0]![0] as number,
    close: () => db.close(),
    export: () => db.export(),
  };
}

export const DATABASES = [
  { kind: "better-sqlite3", open: () => openBetterSqlite() },
  { kind: "sql.js", open: () => openSqlJs() },
] as const;

/** Each build of the engine on each database. */
export const ENGINE_DATABASES = ENGINES.flatMap((engine) =>
  DATABASES.map((database) => ({ ...engine, ...database })),
);
