import type { ZeroMutationResult } from "@weir/protocol";
import type { NamespaceStore } from "../ports/storage.js";
import type { DesiredRowChange } from "./zero-desired-rows.js";
import type { MutationResult } from "./zero-mutation-results.js";

/** The dialect's own tables in the namespace database. */
const ZERO_DESIRED_TABLE = "_weir_zero_desired";
const ZERO_RESULTS_TABLE = "_weir_zero_results";

/** What changed in a group since it was last stored (see ZeroGroup.takeStoreChanges). */
export interface ZeroGroupChanges {
  /** The rows of which client desires which query that changed (null: none). */
  desired: DesiredRowChange[] | null;
  /** Results acknowledged: each client's id up to which they go. */
  acknowledged: Array<{ clientID: string; id: number }>;
  /** Clients that left the group. */
  forgotten: string[];
}

/**
 * What a Zero client group keeps with the namespace's data, so that a hub built after a restart
 * (or a Durable Object woken as a new instance) knows what the old one knew:
 * - which client desires which query: a client that reconnects sends only what changed since
 *   the server's last word on its own queries, so otherwise one tab's queries would be taken for
 *   another's, and go when that one does (the engine keeps the group's queries as a whole);
 * - each mutation's application error until its client acknowledges it: its id advances with
 *   the push, so a client that never got the poke with the error would take it for a success.
 */
export class ZeroGroupStore {
  private created = false;

  constructor(private readonly store: NamespaceStore) {}

  /** Each client's desired query hashes in the group. */
  readDesired(clientGroupID: string): Map<string, string[]> {
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

  /** The group's results not yet acknowledged, in each client's id order. */
  readResults(clientGroupID: string): MutationResult[] {
    this.create();
    return this.store.db
      .query(
        `SELECT client_id, mutation_id, result FROM ${ZERO_RESULTS_TABLE} WHERE group_id = ? ` +
          "ORDER BY client_id, mutation_id",
        [clientGroupID],
      )
      .map(([clientID, id, result]) => ({
        clientID: String(clientID),
        id: Number(id),
        result: JSON.parse(String(result)) as ZeroMutationResult,
      }));
  }

  /** Keeps results of a push, in a transaction of their own. */
  addResults(clientGroupID: string, results: readonly MutationResult[]): void {
    if (results.length === 0) return;
    this.create();
    this.store.transaction(() => {
      for (const { clientID, id, result } of results) {
        this.store.db.exec(
          `INSERT INTO ${ZERO_RESULTS_TABLE} (group_id, client_id, mutation_id, result) VALUES (?, ?, ?, ?) ` +
            "ON CONFLICT DO UPDATE SET result = excluded.result",
          [clientGroupID, clientID, id, JSON.stringify(result)],
        );
      }
    });
  }

  /** Writes what changed in the group; call inside the transaction of the poke that applies it. */
  write(clientGroupID: string, changes: ZeroGroupChanges): void {
    this.create();
    const { db } = this.store;
    for (const { clientID, hash, op } of changes.desired ?? []) {
      db.exec(
        op === "put"
          ? `INSERT INTO ${ZERO_DESIRED_TABLE} (group_id, client_id, hash) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`
          : `DELETE FROM ${ZERO_DESIRED_TABLE} WHERE group_id = ? AND client_id = ? AND hash = ?`,
        [clientGroupID, clientID, hash],
      );
    }
    for (const { clientID, id } of changes.acknowledged) {
      db.exec(`DELETE FROM ${ZERO_RESULTS_TABLE} WHERE group_id = ? AND client_id = ? AND mutation_id <= ?`, [
        clientGroupID,
        clientID,
        id,
      ]);
    }
    for (const clientID of changes.forgotten) {
      db.exec(`DELETE FROM ${ZERO_RESULTS_TABLE} WHERE group_id = ? AND client_id = ?`, [
        clientGroupID,
        clientID,
      ]);
    }
  }

  private create(): void {
    if (this.created) return;
    this.store.transaction(() => {
      this.store.db.exec(
        `CREATE TABLE IF NOT EXISTS ${ZERO_DESIRED_TABLE} (group_id TEXT NOT NULL, client_id TEXT NOT NULL, ` +
          "hash TEXT NOT NULL, PRIMARY KEY (group_id, client_id, hash)) WITHOUT ROWID",
        [],
      );
      this.store.db.exec(
        `CREATE TABLE IF NOT EXISTS ${ZERO_RESULTS_TABLE} (group_id TEXT NOT NULL, client_id TEXT NOT NULL, ` +
          "mutation_id INTEGER NOT NULL, result TEXT NOT NULL, PRIMARY KEY (group_id, client_id, mutation_id)) " +
          "WITHOUT ROWID",
        [],
      );
    });
    this.created = true;
  }
}
