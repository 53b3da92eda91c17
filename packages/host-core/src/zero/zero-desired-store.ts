import type { NamespaceStore } from "../ports/storage.js";

/** The dialect's own table in the namespace database: which client of a group desires which query. */
export const ZERO_DESIRED_TABLE = "_weir_zero_desired";

/**
 * Each Zero client's desired queries, kept with the namespace's data. A client that reconnects
 * sends only what changed since the server's last word on its own queries, so a hub built after
 * a restart (or a Durable Object woken as a new instance) must know, per client, what the old one
 * knew: otherwise one tab's queries would be taken for another's, and go when that one does.
 * The engine keeps the group's queries as a whole (its stored queries); this keeps who wants them.
 */
export class ZeroDesiredStore {
  private created = false;

  constructor(private readonly store: NamespaceStore) {}

  /** Each client's desired query hashes in the group. */
  read(clientGroupID: string): Map<string, string[]> {
    this.create();
    const desired = new Map<string, string[]>();
    for (const [clientID, hash] of this.store.db.query(
      `SELECT client_id, hash FROM ${ZERO_DESIRED_TABLE} WHERE group_id = ? ORDER BY client_id, hash`,
      [clientGroupID],
    )) {
      const hashes = desired.get(String(clientID)) ?? [];
      hashes.push(String(hash));
      desired.set(String(clientID), hashes);
    }
    return desired;
  }

  /** Replaces what the group's clients desire; call inside the transaction that applies it. */
  write(clientGroupID: string, desired: ReadonlyMap<string, Iterable<string>>): void {
    this.create();
    this.store.db.exec(`DELETE FROM ${ZERO_DESIRED_TABLE} WHERE group_id = ?`, [clientGroupID]);
    for (const [clientID, hashes] of desired) {
      for (const hash of hashes) {
        this.store.db.exec(`INSERT INTO ${ZERO_DESIRED_TABLE} (group_id, client_id, hash) VALUES (?, ?, ?)`, [
          clientGroupID,
          clientID,
          hash,
        ]);
      }
    }
  }

  private create(): void {
    if (this.created) return;
    this.store.transaction(() =>
      this.store.db.exec(
        `CREATE TABLE IF NOT EXISTS ${ZERO_DESIRED_TABLE} (group_id TEXT NOT NULL, client_id TEXT NOT NULL, ` +
          "hash TEXT NOT NULL, PRIMARY KEY (group_id, client_id, hash)) WITHOUT ROWID",
        [],
      ),
    );
    this.created = true;
  }
}
