/** A stored row of which client desires which query: put (to insert) or del (to delete). */
export interface DesiredRowChange {
  clientID: string;
  hash: string;
  op: "put" | "del";
}

/**
 * The rows of a group's stored desires (ZeroGroupStore) that differ from what its clients desire
 * now: what the next store writes put and delete. A row put and deleted again before it was
 * written is never written (nor one deleted and put again), so a write costs what changed since
 * the last one, not every query the group holds; a put waits for the pull that applies its query,
 * so a flood of puts the group's caps refuse writes nothing.
 */
export class DesiredRows {
  /** Each client's rows to change, by hash. */
  private readonly pending = new Map<string, Map<string, "put" | "del">>();
  private count = 0;
  /** The clients whose put of a query waits for the pull that sends it to the engine, by hash. */
  private readonly waiting = new Map<string, Set<string>>();
  private waitingCount = 0;

  /** Rows to write, now or once their queries are sent. */
  get size(): number {
    return this.count + this.waitingCount;
  }

  /**
   * A client desires a query it did not; `waiting`: the query is not the engine's yet (its put
   * is pending), and the row waits for `sent`.
   */
  added(clientID: string, hash: string, waiting: boolean): void {
    const rows = this.pending.get(clientID);
    // Deleted and put again before a write: the row is as stored.
    if (rows?.get(hash) === "del") this.drop(clientID, rows, hash);
    else if (!waiting) this.set(clientID, hash, "put");
    else {
      const clients = this.waiting.get(hash) ?? new Set();
      this.waiting.set(hash, clients);
      if (!clients.has(clientID)) this.waitingCount++;
      clients.add(clientID);
    }
  }

  /** A client desires a query no more. */
  removed(clientID: string, hash: string): void {
    const clients = this.waiting.get(hash);
    if (clients?.delete(clientID)) {
      this.waitingCount--;
      if (clients.size === 0) this.waiting.delete(hash);
      return;
    }
    const rows = this.pending.get(clientID);
    // Put and deleted again before a write: never written.
    if (rows?.get(hash) === "put") this.drop(clientID, rows, hash);
    else this.set(clientID, hash, "del");
  }

  /** A pull sends the query's put to the engine: the rows waiting for it go with that pull. */
  sent(hash: string): void {
    const clients = this.waiting.get(hash);
    if (!clients) return;
    this.waiting.delete(hash);
    this.waitingCount -= clients.size;
    for (const clientID of clients) this.set(clientID, hash, "put");
  }

  /** Takes the changes for a write (null: none), but for the rows waiting for their queries. */
  take(): DesiredRowChange[] | null {
    if (this.count === 0) return null;
    const changes: DesiredRowChange[] = [];
    for (const [clientID, rows] of this.pending)
      for (const [hash, op] of rows) changes.push({ clientID, hash, op });
    this.pending.clear();
    this.count = 0;
    return changes;
  }

  /**
   * Changes taken were not written after all. Those noted since apply after them: a row the two
   * change in opposite ways is as stored.
   */
  restore(changes: readonly DesiredRowChange[]): void {
    for (const { clientID, hash, op } of changes) {
      const rows = this.pending.get(clientID);
      const since = rows?.get(hash);
      if (since === undefined) this.set(clientID, hash, op);
      else if (since !== op) this.drop(clientID, rows!, hash);
    }
  }

  private set(clientID: string, hash: string, op: "put" | "del"): void {
    let rows = this.pending.get(clientID);
    if (!rows) {
      rows = new Map();
      this.pending.set(clientID, rows);
    }
    if (!rows.has(hash)) this.count++;
    rows.set(hash, op);
  }

  private drop(clientID: string, rows: Map<string, "put" | "del">, hash: string): void {
    rows.delete(hash);
    this.count--;
    if (rows.size === 0) this.pending.delete(clientID);
  }
}
