import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import {
  type Engine,
  EngineError,
  engineWasmUrl,
  loadEngine,
  type Schema,
  schemaProblems,
  storedSchema,
} from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import type { NamespaceStore } from "@weir/host-core";
import Database from "better-sqlite3";
import { CliError } from "./cli-error.js";

/** The server's settings for a namespace file, so a file the command writes reads the same. */
const BUSY_TIMEOUT_MS = 5_000;

/** A namespace file opened for writing, with the schema the engine works on in it. */
export interface IngestTarget {
  readonly db: Database.Database;
  readonly store: NamespaceStore;
  readonly engine: Engine;
  readonly schema: Schema;
  /** Where the schema came from: the config, or what the file records. */
  readonly schemaSource: "config" | "file";
  /** What installing the schema did: created the namespace, nothing, or migrated it. */
  readonly install: "created" | "unchanged" | "migrated";
  close(): void;
}

/** The config's `schema`, checked by the engine's own rules; a clear error when it is missing or wrong. */
export function configSchema(config: Record<string, unknown>, path: string): Schema {
  if (config.schema === undefined) {
    throw new CliError(
      `config ${path} has no schema: it must export { schema: { tables: { ... } } }`,
      "bad_config",
    );
  }
  const problems = schemaProblems(config.schema);
  if (problems.length > 0) {
    throw new CliError(`config ${path} has an invalid ${problems.join("; ")}`, "bad_config");
  }
  return config.schema as Schema;
}

/**
 * Opens (or, given a schema, creates) a namespace's SQLite file as its server does (WAL,
 * synchronous=NORMAL) and installs the schema: the config's when one is given (the engine
 * migrates the file to it or refuses, as the server would on open), else the one the file
 * records. Call under the file's lease.
 */
export async function openIngestTarget(file: string, given: Schema | undefined): Promise<IngestTarget> {
  const exists = existsSync(file);
  if (exists && !statSync(file).isFile()) throw new CliError(`${file} is not a file`, "not_found");
  if (!exists && given === undefined) {
    throw new CliError(
      `no such database file: ${file} (pass --config with the app's schema to create it)`,
      "not_found",
    );
  }
  if (!exists && !existsSync(dirname(file))) {
    throw new CliError(`no such directory: ${dirname(file)}`, "not_found");
  }
  let db: Database.Database;
  try {
    db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (error) {
    throw new CliError(`cannot open ${file}: ${(error as Error).message}`, "open_failed");
  }
  try {
    const adapter = betterSqliteAdapter(db);
    const recorded = storedSchema(adapter);
    if (exists && recorded === null && tableCount(db) > 0) {
      throw new CliError(
        `${file} is not a weir namespace database (it has tables but no weir state)`,
        "not_weir",
      );
    }
    const schema = given ?? recorded;
    if (schema === null) {
      throw new CliError(`${file} records no schema yet: pass --config with the app's schema`, "no_schema");
    }
    const engine = await loadEngine(readFileSync(engineWasmUrl));
    // One wrapper for every call: better-sqlite3 turns a nested call into a savepoint.
    const run = db.transaction((fn: () => unknown) => fn());
    const store: NamespaceStore = {
      db: adapter,
      location: file,
      transaction: <T>(fn: () => T) => run(fn) as T,
      close: () => db.close(),
    };
    let install: IngestTarget["install"];
    try {
      install = store.transaction(() => engine.install(adapter, schema)).outcome;
    } catch (error) {
      if (error instanceof EngineError && error.code === "schema_mismatch") {
        throw new CliError(`the config's schema does not fit ${file}: ${error.message}`, "schema_mismatch");
      }
      throw error;
    }
    return {
      db,
      store,
      engine,
      schema,
      schemaSource: given === undefined ? "file" : "config",
      install,
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

function tableCount(db: Database.Database): number {
  return db
    .prepare(
      `SELECT count(*) FROM sqlite_master WHERE type = 'table'
       AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
    )
    .pluck()
    .get() as number;
}
