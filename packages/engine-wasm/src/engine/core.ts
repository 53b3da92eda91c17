import { QUERY_TABLES_PROBE } from "../abi.js";
import { EngineError } from "../engine-error.js";
import { EngineFailure, type EngineModule } from "../engine-module.js";
import { schemaText } from "../schema-text.js";
import type { SqlBridge } from "../sql-bridge.js";
import type { Schema, SqlAdapter, SqlValue } from "../types.js";
import { WorkMeter } from "../work-meter.js";

const CALLS_PER_COLLECT = 64;
/**
 * Past this much linear memory after a call the instance is replaced: a WebAssembly memory
 * never shrinks, and one large call must not keep its memory for the life of the process.
 * Ordinary calls stay far below it (a 10,000-mutation push needs about 2 MiB).
 */
export const DEFAULT_MEMORY_CEILING_BYTES = 32 * 1024 * 1024;

/**
 * What every feature of the engine shares: the instance, the call's database and extra
 * parameters, schema handles and what each database has installed, and the instance's upkeep
 * between calls (collection, renewal).
 */
export class EngineCore {
  /** The engine's imports: the current call's database. */
  readonly bridge: SqlBridge;
  readonly wasm: EngineModule;
  /** Meters query evaluations where the driver lets it (PullInput.queryBudgetMs). */
  readonly meter = new WorkMeter();
  /** How many times the instance was replaced (memory past the ceiling, or a failure). */
  renewals = 0;
  private callsSinceCollect = 0;
  private readonly memoryCeilingBytes: number;
  /** The memory's size after the last collection: a call that grew it is collected after at once. */
  private collectedBytes: number;
  private readonly schemaHandles = new Map<Schema, number>();
  /** The schema installed on each database (its handle may change when the instance is replaced). */
  readonly installed = new WeakMap<SqlAdapter, Schema>();
  /**
   * Whether each database has the query tables (see assembly/query/tables.ts), as install found
   * it or the database was asked; forgotten after a pull that may have created them.
   */
  readonly queryTables = new WeakMap<SqlAdapter, boolean>();

  constructor(wasm: EngineModule, bridge: SqlBridge, memoryCeilingBytes = DEFAULT_MEMORY_CEILING_BYTES) {
    this.wasm = wasm;
    this.bridge = bridge;
    this.memoryCeilingBytes = memoryCeilingBytes;
    this.collectedBytes = wasm.memoryBytes();
  }

  /** Runs `fn`'s engine calls on `db`, whose extra parameters are `extras`. */
  call<T>(db: SqlAdapter, extras: readonly SqlValue[], fn: () => T): T {
    this.bridge.enter(db, extras);
    try {
      return fn();
    } catch (error) {
      // A trap or an abort may leave the instance's memory in any state: no later call, of this
      // namespace or another, may run on it. (An error thrown by the host's SQL unwinds through
      // the engine without touching its state, and propagates as it is.)
      if (error instanceof EngineFailure || error instanceof WebAssembly.RuntimeError) {
        this.renew();
        throw error instanceof EngineFailure ? error : new EngineFailure(error.message, { cause: error });
      }
      throw error;
    } finally {
      this.bridge.leave();
      this.afterCall();
    }
  }

  /**
   * The engine runs AssemblyScript's minimal runtime: garbage is collected here, between calls,
   * where nothing the engine allocated is still in use. A call that grew the memory is collected
   * after at once, and one that left it past the ceiling gets a fresh instance.
   */
  private afterCall(): void {
    const bytes = this.wasm.memoryBytes();
    if (bytes > this.memoryCeilingBytes) {
      this.renew();
      return;
    }
    if (bytes > this.collectedBytes || ++this.callsSinceCollect >= CALLS_PER_COLLECT) {
      this.callsSinceCollect = 0;
      this.collectedBytes = bytes;
      this.wasm.collect();
    }
  }

  /** A fresh instance: its memory starts small again, and schemas are registered again on use. */
  private renew(): void {
    this.wasm.renew();
    this.schemaHandles.clear();
    this.callsSinceCollect = 0;
    this.collectedBytes = this.wasm.memoryBytes();
    this.renewals++;
  }

  /** The schema's handle in the current instance, registered on first use. */
  handle(schema: Schema): number {
    let handle = this.schemaHandles.get(schema);
    if (handle === undefined) {
      handle = this.wasm.registerSchema({ text: schemaText(schema) });
      this.schemaHandles.set(schema, handle);
    }
    return handle;
  }

  /** Whether `db` has the query tables: known, or asked of the database once. */
  hasQueryTables(db: SqlAdapter): boolean {
    let known = this.queryTables.get(db);
    if (known === undefined) {
      known = db.query(QUERY_TABLES_PROBE, []).length > 0;
      this.queryTables.set(db, known);
    }
    return known;
  }

  /** The schema installed on `db` through this engine. */
  installedOn(db: SqlAdapter, before = "first"): Schema {
    const installed = this.installed.get(db);
    if (!installed) throw new EngineError("internal", `install the schema on this database ${before}`);
    return installed;
  }
}
