import { namespaceHash } from "@weir/host-core";

/** The object's own table: which namespace it serves (its name is not visible inside it). */
export const OBJECT_TABLE = "_weir_edge_object";
/** Any table of weir's: the namespace was installed, so written to. */
const ANY_WEIR_TABLE = "SELECT 1 FROM sqlite_master WHERE name LIKE '\\_weir\\_%' ESCAPE '\\' LIMIT 1";

/**
 * The namespace an object serves, stored in its database on the first request, so that after an
 * eviction it knows its name again (for alarms, and to refuse requests routed to the wrong object).
 *
 * A new object writes nothing until its first request has been served: each write the object
 * makes on its own is a commit that holds up what it awaits next (the platform's input gate), so
 * the binding is stored with the namespace's install and first answer, as one commit; a
 * namespace only pulled from installs nothing, and stores no binding either.
 */
export class ObjectBinding {
  namespace: string | null = null;
  hash: string | null = null;
  /** Bound, not stored yet. */
  private unstored = false;

  constructor(private readonly storage: DurableObjectStorage) {
    const table = storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", OBJECT_TABLE)
      .toArray();
    if (table.length === 0) return;
    const row = storage.sql
      .exec<{ value: string }>(`SELECT value FROM ${OBJECT_TABLE} WHERE key = 'namespace'`)
      .toArray()[0];
    this.namespace = row?.value ?? null;
  }

  /** Computes the namespace's hash once the object is awake. */
  async ready(): Promise<void> {
    if (this.namespace !== null) this.hash = await namespaceHash(this.namespace);
  }

  /** Binds the object to `namespace`; `store` writes it down, once the request is served. */
  bind(namespace: string, hash: string): void {
    this.namespace = namespace;
    this.hash = hash;
    this.unstored = true;
  }

  /**
   * Stores the binding made by `bind` once the request wrote the namespace's data (or `always`):
   * a namespace only pulled from keeps its database empty, and a new object that serves it binds
   * itself again from its first request. Answers whether it stored the binding now.
   */
  store(always: boolean): boolean {
    if (!this.unstored) return false;
    if (!always && this.storage.sql.exec(ANY_WEIR_TABLE).toArray().length === 0) return false;
    this.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${OBJECT_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
    );
    this.storage.sql.exec(`INSERT INTO ${OBJECT_TABLE} (key, value) VALUES ('namespace', ?)`, this.namespace);
    this.unstored = false;
    return true;
  }
}
