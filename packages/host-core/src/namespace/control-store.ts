import type { FaultPoint } from "@weir/protocol";
import { type Counters, emptyCounters } from "../flows/counters.js";
import { DEFAULT_KNOBS, type Knobs } from "../flows/knobs.js";
import type { NamespaceStore } from "../ports/storage.js";

/**
 * The host's own table in the namespace database, apart from the engine's bookkeeping, so that
 * every knob survives a restart with the data it governs.
 */
export const CONTROL_TABLE = "_weir_host_control";
const CREATE_CONTROL_TABLE = `CREATE TABLE IF NOT EXISTS ${CONTROL_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`;

/** Records the host keeps beside the knobs (the ingest breaker and its progress). */
export type RecordKey = "breaker" | "ingest";
type Key = keyof Knobs | "counters" | RecordKey;

export class ControlStore {
  readonly knobs: Knobs;
  readonly counters: Counters;

  private constructor(
    private readonly store: NamespaceStore,
    knobs: Knobs,
    counters: Counters,
    private readonly records: Map<string, unknown>,
  ) {
    this.knobs = knobs;
    this.counters = counters;
  }

  /** Creates the table if needed and reads every stored value. Call inside no transaction. */
  static open(store: NamespaceStore): ControlStore {
    const rows = store.transaction(() => {
      ControlStore.create(store.db);
      return store.db.query(`SELECT key, value FROM ${CONTROL_TABLE}`, []);
    });
    const stored = new Map(rows.map(([key, value]) => [String(key), JSON.parse(String(value)) as unknown]));
    const knobs = { ...DEFAULT_KNOBS, faults: {} } as Record<string, unknown>;
    for (const key of Object.keys(DEFAULT_KNOBS)) if (stored.has(key)) knobs[key] = stored.get(key);
    const counters = { ...emptyCounters(), ...((stored.get("counters") as Partial<Counters>) ?? {}) };
    return new ControlStore(store, knobs as unknown as Knobs, counters, stored);
  }

  /**
   * The store of a database that holds nothing yet: the defaults, nothing read or written. Its
   * table is created (`create`) when the namespace is installed, before anything is stored.
   */
  static fresh(store: NamespaceStore): ControlStore {
    return new ControlStore(store, { ...DEFAULT_KNOBS, faults: {} }, emptyCounters(), new Map());
  }

  /** Creates the table if needed. */
  static create(db: NamespaceStore["db"]): void {
    db.exec(CREATE_CONTROL_TABLE, []);
  }

  /** Changes a knob and stores it in its own transaction (nested in the caller's, if any). */
  set<K extends keyof Knobs>(key: K, value: Knobs[K]): void {
    this.write(key, value);
    this.knobs[key] = value;
  }

  /** Disarms a fault point once it fired (stored, so a restart does not fire it again). */
  disarm(point: FaultPoint): void {
    const faults = { ...this.knobs.faults };
    delete faults[point];
    this.set("faults", faults);
  }

  /** A record as last stored, or undefined. */
  record<T>(key: RecordKey): T | undefined {
    return this.records.get(key) as T | undefined;
  }

  /** Stores a record in its own transaction (nested in the caller's, if any). */
  setRecord(key: RecordKey, value: unknown): void {
    this.write(key, value);
    this.records.set(key, value);
  }

  /** Stores the in-memory counters, on close and now and then. */
  saveCounters(): void {
    this.write("counters", this.counters);
  }

  private write(key: Key, value: unknown): void {
    this.store.transaction(() => {
      this.store.db.exec(
        `INSERT INTO ${CONTROL_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [key, JSON.stringify(value)],
      );
    });
  }
}
