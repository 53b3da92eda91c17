import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { loadCursors, type NamespaceCursor, saveCursors } from "./buffer-cursors.js";
import { BufferReads } from "./buffer-reads.js";
import { BufferWrites } from "./buffer-writes.js";
import {
  BUFFER_SCHEMA,
  type BufferedChange,
  type BufferIdentity,
  type CommittedTransaction,
  type Retention,
  type StoredChange,
} from "./change-buffer-schema.js";
import type { UnservableTenants } from "./unservable-tenants.js";
import { WalFlusher } from "./wal-flusher.js";

/** At most this many changes are deleted by one `prune`, so that a request never waits long. */
const PRUNE_BATCH = 50_000;
/** `PRAGMA auto_vacuum`'s value for INCREMENTAL. */
const AUTO_VACUUM_INCREMENTAL = 2;
/** The WAL file is cut back to this size after each checkpoint that empties it. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * The durable change buffer: a SQLite file holding decoded transactions in commit order, each
 * under its watermark (its commit LSN). Its `head` is the newest committed watermark and its
 * `floor` the lowest watermark it answers `changes` from: everything committed upstream after
 * the floor is here, up to the head. Commits return once written (synchronous=NORMAL: safe from
 * a crash of the process); `sync` then makes them durable with an fsync off the event loop, and
 * only then are they shown (`head`, `through`) and confirmed to PostgreSQL (`durableLsn`), so
 * neither a namespace nor the slot ever stands past what a power loss would keep.
 */
export class ChangeBuffer {
  private readonly db: Database.Database;
  /** Counts the changes whose tenant no namespace can serve, as they are written. */
  get tenants(): UnservableTenants | null {
    return this.writes.tenants;
  }
  set tenants(tenants: UnservableTenants | null) {
    this.writes.tenants = tenants;
  }
  private floorValue = 0n;
  private headValue = 0n;
  private readonly reads: BufferReads;
  /** How far the stream was read (see `through`). */
  private throughValue = 0n;
  /** The stored `end_lsn` (where the stream resumes) and `total` (changes held), kept in memory. */
  private endLsnValue: bigint | null = null;
  private totalValue = 0n;
  /** What the last `sync` made durable: the head, `through` and end LSN that are shown. */
  private durableHead = 0n;
  private durableThrough = 0n;
  private durableEnd: bigint | null = null;
  private readonly wal: WalFlusher;
  private initializedValue = false;
  /** Set when the stored rows were encoded under other options and were dropped at open. */
  resetReason: string | null = null;
  private readonly writes: BufferWrites;
  /** Statements prepared once: the reader commits, prunes and reports its position on every flush. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    readonly file: string,
    identity: BufferIdentity,
  ) {
    this.db = new Database(file);
    // Pruning frees pages: each prune hands them back to the file system (incremental vacuum),
    // so the file follows what retention keeps. A file made before is converted once.
    if (this.db.pragma("auto_vacuum", { simple: true }) !== AUTO_VACUUM_INCREMENTAL) {
      this.db.pragma("auto_vacuum = INCREMENTAL");
      this.db.exec("VACUUM");
    }
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    this.db.pragma("synchronous = NORMAL");
    this.wal = new WalFlusher(file);
    this.db.defaultSafeIntegers(true);
    this.db.exec(BUFFER_SCHEMA);
    const slot = this.meta("slot");
    const publication = this.meta("publication");
    if (
      (slot !== null && slot !== identity.slot) ||
      (publication !== null && publication !== identity.publication)
    ) {
      this.db.close();
      throw new Error(
        `buffer ${file} belongs to slot ${slot} and publication ${publication}, not ${identity.slot} and ${identity.publication}: use another buffer file`,
      );
    }
    this.reads = new BufferReads(this.db);
    this.writes = new BufferWrites(this.db);
    const end = this.meta("end_lsn");
    this.endLsnValue = end === null ? null : BigInt(end);
    this.totalValue = BigInt(this.meta("total") ?? "0");
    const floor = this.meta("floor");
    if (floor !== null) {
      this.initializedValue = true;
      this.floorValue = BigInt(floor);
      this.headValue = BigInt(this.meta("head") ?? floor);
      this.throughValue = this.endLsnValue === null ? 0n : this.endLsnValue - 1n;
    }
    const configKey = this.meta("config");
    if (configKey !== null && configKey !== identity.configKey && this.initializedValue) {
      this.dropAll("the tables, columns or tenant rules changed: buffered changes were dropped");
    }
    this.db.transaction(() => {
      this.setMeta("slot", identity.slot);
      this.setMeta("publication", identity.publication);
      this.setMeta("config", identity.configKey);
    })();
    this.markDurable();
  }

  /**
   * Rows encoded for other tables or columns would be misread: drops them, and raises the floor
   * above every cursor a namespace may hold (a cursor is at most `through`, the end of the stream
   * read less one), caught up ones included: each then gets 410 and takes a fresh snapshot under
   * the new options. The head stays, so that a commit that starts right at the end of the stream
   * read is still buffered when PostgreSQL sends it.
   */
  private dropAll(reason: string): void {
    this.db.transaction(() => {
      this.db.exec("DELETE FROM change; DELETE FROM route; DELETE FROM tx;");
      const stream = this.endLsnValue ?? 0n;
      this.floorValue = this.headValue + 1n;
      if (stream > this.floorValue) this.floorValue = stream;
      this.setMeta("floor", this.floorValue);
      this.setMeta("total", 0n);
    })();
    this.totalValue = 0n;
    this.resetReason = reason;
  }

  /**
   * The tables were read again while the reader runs (a column was added upstream): when what the
   * rows are encoded under changed, the buffer resets as at an open under other options. Call it
   * with the reader disconnected and every decoded commit flushed. Answers whether it reset.
   */
  reencode(configKey: string, reason: string): boolean {
    if (this.meta("config") === configKey) return false;
    if (this.initializedValue) this.dropAll(reason);
    this.setMeta("config", configKey);
    return true;
  }

  /** What the file holds is what a power loss keeps (at open, or after a start over). */
  private markDurable(): void {
    this.durableHead = this.headValue;
    this.durableThrough = this.throughValue;
    this.durableEnd = this.endLsnValue;
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private meta(key: string): string | null {
    const row = this.statement("SELECT value FROM meta WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  private setMeta(key: string, value: string | bigint | number): void {
    this.statement("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(key, String(value));
  }

  /** Whether a floor was set: false for a new file, until `initialize`. */
  get initialized(): boolean {
    return this.initializedValue;
  }

  /** The lowest watermark `changes` answers from. */
  get floor(): bigint {
    return this.floorValue;
  }

  /** The newest durable watermark (the floor while nothing is buffered): what readers see. */
  get head(): bigint {
    return this.durableHead;
  }

  /** The newest committed watermark, durable or not: where the reader skips what it sent again. */
  get writtenHead(): bigint {
    return this.headValue;
  }

  /**
   * The highest watermark a cursor may stand at: every commit at or below it is buffered. At
   * least the head; past it up to the end of the newest commit record, and up to a keepalive
   * that found nothing left to buffer. An app that commits to PostgreSQL and then reads
   * `pg_current_wal_insert_lsn()` knows its commit is buffered once this reaches that LSN less
   * one (delegated push waits for this).
   */
  get through(): bigint {
    // bigints: Math.max does not take them.
    let through = this.durableHead;
    if (this.durableThrough > through) through = this.durableThrough;
    // After a reset the floor lies past the head: a snapshot stands there (see `snapshotStart`).
    if (this.floorValue > through) through = this.floorValue;
    return through;
  }

  /**
   * Where a snapshot that saw every buffered commit stands: the head, or the floor when a reset
   * raised it past the head. Nothing commits between the two but at the floor itself, before
   * the reset was served (see `postgresUpstream`), so a snapshot sees such a commit.
   */
  get snapshotStart(): bigint {
    // bigints: Math.max does not take them.
    if (this.floorValue > this.durableHead) return this.floorValue;
    return this.durableHead;
  }

  /**
   * Makes every commit and `advance` so far durable, then shows them. Calls made while an fsync
   * runs share the next one.
   */
  async sync(): Promise<void> {
    const head = this.headValue;
    const through = this.throughValue;
    const end = this.endLsnValue;
    if (head === this.durableHead && through === this.durableThrough && end === this.durableEnd) return;
    await this.wal.flush();
    // Calls resolve in order; a start over (restartAt) in between has set these itself.
    if (through < this.durableThrough) return;
    this.durableHead = head;
    this.durableThrough = through;
    this.durableEnd = end;
  }

  /**
   * The stream passed `lsn` with no transaction open or waiting: every commit record that starts
   * before it is in. Stored as where the stream resumes.
   */
  advance(lsn: bigint): void {
    if (lsn - 1n <= this.throughValue || lsn - 1n <= this.headValue) return;
    this.setMeta("end_lsn", lsn);
    this.endLsnValue = lsn;
    this.throughValue = lsn - 1n;
  }

  /** Where the stream resumes: the end of the newest buffered commit, or null for a new buffer. */
  resumeLsn(): bigint | null {
    return this.endLsnValue;
  }

  /** What may be confirmed to PostgreSQL: `resumeLsn` as of the last `sync`. */
  durableLsn(): bigint | null {
    return this.durableEnd;
  }

  /** Starts a new buffer at `floor`: the slot's position, from which PostgreSQL sends every commit. */
  initialize(floor: bigint): void {
    this.db.transaction(() => {
      this.setMeta("floor", floor);
      this.setMeta("head", floor);
      this.setMeta("total", 0n);
    })();
    this.totalValue = 0n;
    this.floorValue = floor;
    this.headValue = floor;
    this.initializedValue = true;
    this.markDurable();
  }

  /**
   * Starts over at `position` for a slot that was created after this buffer: commits between
   * the buffer's head and the new slot were never sent, so nothing buffered can be continued.
   */
  restartAt(position: bigint): void {
    this.db.transaction(() => {
      this.db.exec(
        "DELETE FROM change; DELETE FROM route; DELETE FROM tx; DELETE FROM meta WHERE key = 'end_lsn';",
      );
    })();
    this.throughValue = 0n;
    this.endLsnValue = null;
    this.initialize(position);
  }

  /** Drops the written parts of a transaction whose commit never arrived (a crash, a lost connection). */
  discardPending(): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM change WHERE watermark > ?").run(this.headValue);
      this.db.prepare("DELETE FROM route WHERE watermark > ?").run(this.headValue);
    })();
  }

  /**
   * Writes part of a large transaction before its commit arrives, so that memory stays bounded.
   * Readers never see it: they read up to the head, which moves only in `commit`.
   */
  writePending(watermark: bigint, firstSeq: number, changes: BufferedChange[]): void {
    this.db.transaction(() => this.writes.writeChanges(watermark, firstSeq, changes))();
  }

  /** Commits whole transactions in one SQLite transaction, and moves the head past them. */
  commit(transactions: CommittedTransaction[], now: number): void {
    if (transactions.length === 0) return;
    let total = 0;
    this.db.transaction(() => {
      for (const tx of transactions) {
        this.writes.writeChanges(tx.watermark, tx.firstSeq, tx.changes);
        this.statement(
          "INSERT OR REPLACE INTO tx (watermark, xid, end_lsn, committed_at, changes) VALUES (?, ?, ?, ?, ?)",
        ).run(tx.watermark, tx.xid, tx.endLsn, now, tx.total);
        total += tx.total;
      }
      const last = transactions[transactions.length - 1]!;
      this.setMeta("head", last.watermark);
      this.setMeta("end_lsn", last.endLsn);
      this.setMeta("total", this.totalValue + BigInt(total));
    })();
    this.totalValue += BigInt(total);
    this.endLsnValue = transactions[transactions.length - 1]!.endLsn;
    this.headValue = transactions[transactions.length - 1]!.watermark;
    // A commit record ends where the next one may start: the next commit's watermark is above.
    this.throughValue = transactions[transactions.length - 1]!.endLsn - 1n;
  }

  /**
   * The changes after `after` up to the head, in commit order, lazily: every change when
   * `tenant` is undefined, else those routed to `tenant` and the shared ones (see BufferReads).
   */
  read(after: bigint, head: bigint, tenant: string | undefined): Generator<StoredChange> {
    return this.reads.read(after, head, tenant);
  }

  /** The oldest buffered transaction a snapshot could not see (see BufferReads). */
  oldestInvisible(inProgress: number[], xmax: number): bigint | null {
    return this.reads.oldestInvisible(this.headValue, inProgress, xmax);
  }

  /**
   * Deletes the oldest whole transactions that retention no longer keeps (older than
   * `maxAgeMs`, or beyond the newest `maxChanges` changes), at most about PRUNE_BATCH changes a
   * call, and raises the floor to the newest one deleted. Answers how many changes it deleted.
   */
  prune(retention: Retention, now: number): number {
    let total = Number(this.totalValue);
    const oldest = this.statement(
      "SELECT watermark, committed_at, changes FROM tx ORDER BY watermark",
    ).iterate() as IterableIterator<{ watermark: bigint; committed_at: bigint; changes: bigint }>;
    let cut: bigint | null = null;
    let deleted = 0;
    for (const tx of oldest) {
      const expired = Number(tx.committed_at) < now - retention.maxAgeMs;
      if (!expired && total <= retention.maxChanges) break;
      if (deleted > 0 && deleted + Number(tx.changes) > PRUNE_BATCH) break;
      cut = tx.watermark;
      deleted += Number(tx.changes);
      total -= Number(tx.changes);
    }
    if (cut === null) return 0;
    const floor = cut;
    this.db.transaction(() => {
      this.statement("DELETE FROM change WHERE watermark <= ?").run(floor);
      this.statement("DELETE FROM route WHERE watermark <= ?").run(floor);
      this.statement("DELETE FROM tx WHERE watermark <= ?").run(floor);
      if (floor > this.floorValue) this.setMeta("floor", floor);
      this.setMeta("total", total);
    })();
    this.db.pragma("incremental_vacuum");
    this.totalValue = BigInt(total);
    if (floor > this.floorValue) this.floorValue = floor;
    return deleted;
  }

  /** Remembers the watermark each namespace last asked from (shown in status, and woken later). */
  saveCursors(cursors: Map<string, NamespaceCursor>): void {
    saveCursors(this.db, cursors);
  }

  cursors(): Map<string, NamespaceCursor> {
    return loadCursors(this.db);
  }

  stats(): { changes: number; transactions: number; bytes: number } {
    const transactions = this.db.prepare("SELECT count(*) AS n FROM tx").get() as { n: bigint };
    let bytes = 0;
    for (const suffix of ["", "-wal"]) {
      try {
        bytes += statSync(this.file + suffix).size;
      } catch {}
    }
    return { changes: Number(this.totalValue), transactions: Number(transactions.n), bytes };
  }

  close(): void {
    void this.wal.close();
    if (this.db.open) this.db.close();
  }

  /** Whether `close` was called: nothing is read or written any more. */
  get closed(): boolean {
    return !this.db.open;
  }
}
