import { namespaceHash } from "@weir/host-core";

/** The object's own table: which namespace it serves (its name is not visible inside it). */
export const OBJECT_TABLE = "_weir_edge_object";

/**
 * The namespace an object serves, stored in its database on the first request, so that after an
 * eviction it knows its name again (for alarms, and to refuse requests routed to the wrong object).
 */
export class ObjectBinding {
  namespace: string | null;
  hash: string | null = null;

  constructor(private readonly storage: DurableObjectStorage) {
    storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${OBJECT_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
    );
    const row = storage.sql
      .exec<{ value: string }>(`SELECT value FROM ${OBJECT_TABLE} WHERE key = 'namespace'`)
      .toArray()[0];
    this.namespace = row?.value ?? null;
  }

  /** Computes the namespace's hash once the object is awake. */
  async ready(): Promise<void> {
    if (this.namespace !== null) this.hash = await namespaceHash(this.namespace);
  }

  bind(namespace: string, hash: string): void {
    this.storage.sql.exec(`INSERT INTO ${OBJECT_TABLE} (key, value) VALUES ('namespace', ?)`, namespace);
    this.namespace = namespace;
    this.hash = hash;
  }
}
