import type { ChangeBuffer } from "./change-buffer.js";
import type { CommittedTransaction, Retention } from "./change-buffer-schema.js";

/** What a flush committed: the namespaces it touches, for the wake. */
export interface CommittedBatch {
  watermark: bigint;
  tenants: Set<string>;
  /** Some change reaches every namespace (a shared table, a TRUNCATE, no tenant rules). */
  shared: boolean;
  transactions: number;
  changes: number;
}

/** A decoded transaction whose commit arrived, with the namespaces it touches. */
export type ReadyTransaction = CommittedTransaction & { tenants: Set<string>; shared: boolean };

export interface CommitPipelineInit {
  buffer: ChangeBuffer;
  retention: Retention;
  /** After a flush is durable: confirm it to PostgreSQL, then wake its namespaces. */
  confirm(): void;
  onCommitted(batch: CommittedBatch): void;
  /** Whether the reader halted (drift, a reload): a held keepalive then lies past what is read. */
  halted(): boolean;
}

/**
 * From decoded commits to durable ones: commits decoded from the same socket read are written to
 * the buffer together and made durable by one fsync, run off the event loop; only then are they
 * shown to namespaces, woken and confirmed. A keepalive that says the stream passed a position
 * moves the buffer there once every commit before it is durable.
 */
export class CommitPipeline {
  private ready: ReadyTransaction[] = [];
  private flushScheduled = false;
  /** The newest flush's fsync and what follows it (the wake, the confirmation). */
  private durable: Promise<void> = Promise.resolve();
  /** The newest keepalive position that is durable. */
  private keepalive = 0n;
  /** A keepalive that came between transactions while earlier ones waited for their flush. */
  private heldKeepalive = 0n;

  constructor(private readonly init: CommitPipelineInit) {}

  /** A new connection: what was decoded but not flushed is sent again from the slot. */
  restart(): void {
    this.ready = [];
  }

  /** The newest watermark decoded or buffered: a transaction at or below it was sent again. */
  get newestWatermark(): bigint {
    return this.ready.length > 0
      ? this.ready[this.ready.length - 1]!.watermark
      : this.init.buffer.writtenHead;
  }

  /** Whether commits wait for their flush. */
  get waiting(): boolean {
    return this.ready.length > 0 || this.flushScheduled;
  }

  /** A transaction's commit was decoded: flushed with the others of this socket read. */
  committed(transaction: ReadyTransaction, fail: (error: unknown) => void): void {
    this.ready.push(transaction);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // Commits decoded from the same socket read are flushed together: one fsync for many.
      setImmediate(() => this.flush(fail));
    }
  }

  /**
   * A keepalive at `at` with no transaction open: every commit before it is in. While commits
   * still wait for their flush, the position holds once they are durable (PostgreSQL may send no
   * other keepalive before the next write, and a push waits for this one).
   */
  keepaliveAt(at: bigint, fail: (error: unknown) => void): void {
    if (this.waiting) {
      if (at > this.heldKeepalive) this.heldKeepalive = at;
    } else this.passKeepalive(at, fail);
  }

  /** Every commit before `at` is buffered: the buffer stands there. */
  private passKeepalive(at: bigint, fail: (error: unknown) => void): void {
    try {
      this.init.buffer.advance(at);
    } catch (error) {
      fail(error);
      return;
    }
    // Confirmed (and shown to namespaces) once durable.
    this.init.buffer.sync().then(() => {
      if (at > this.keepalive) this.keepalive = at;
    }, fail);
  }

  /** Writes the decoded commits to the buffer; shows, wakes and confirms them once durable. */
  flush(fail: (error: unknown) => void): void {
    const { buffer, retention } = this.init;
    this.flushScheduled = false;
    const transactions = this.ready;
    const held = this.heldKeepalive;
    this.heldKeepalive = 0n;
    if (transactions.length === 0) {
      if (held > 0n && !this.init.halted()) this.passKeepalive(held, fail);
      return;
    }
    this.ready = [];
    try {
      buffer.commit(transactions, Date.now());
    } catch (error) {
      // Not confirmed, so the slot sends these again on the next connection.
      fail(error);
      return;
    }
    // Transactions after the held keepalive commit later than it, so it holds whatever came since.
    if (held > 0n && !this.init.halted()) this.passKeepalive(held, fail);
    const batch = batchOf(transactions);
    // The fsync runs off the event loop, so the next socket read is decoded meanwhile.
    this.durable = buffer.sync().then(() => {
      // Closed meanwhile (the reader stopped): nothing is confirmed, shown or pruned; the slot
      // sends these again on the next connection.
      if (buffer.closed) return;
      this.init.confirm();
      this.init.onCommitted(batch);
      buffer.prune(retention, Date.now());
    }, fail);
  }

  /** Flushes what waits, and resolves once every flush is durable (and followed up). */
  async settle(fail: (error: unknown) => void): Promise<void> {
    if (this.flushScheduled) this.flush(fail);
    await this.durable;
  }

  /**
   * What may be confirmed to PostgreSQL: what the buffer holds durably, or a durable keepalive
   * past it while no transaction is open (`open`) or waiting. Null before anything is.
   */
  position(open: boolean): bigint | null {
    const durable = this.init.buffer.durableLsn() ?? 0n;
    let position = durable > this.keepalive ? durable : this.keepalive;
    if (open || this.ready.length > 0) position = durable;
    return position === 0n ? null : position;
  }
}

function batchOf(transactions: ReadyTransaction[]): CommittedBatch {
  const last = transactions[transactions.length - 1]!;
  const tenants = new Set<string>();
  let shared = false;
  let changes = 0;
  for (const tx of transactions) {
    for (const tenant of tx.tenants) tenants.add(tenant);
    shared ||= tx.shared;
    changes += tx.total;
  }
  return { watermark: last.watermark, tenants, shared, transactions: transactions.length, changes };
}
