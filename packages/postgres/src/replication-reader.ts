import { type Logger, retryDelayMs } from "@weir/host-core";
import { LogicalReplicationService, PgoutputPlugin } from "pg-logical-replication";
import type { ChangeBuffer } from "./change-buffer.js";
import type { BufferedChange, CommittedTransaction, Retention } from "./change-buffer-schema.js";
import { formatLsn, parseLsn } from "./lsn.js";
import type { TablePlan } from "./read-tables.js";
import { rowChange } from "./row-change.js";
import { type RelationShape, type SchemaDrift, schemaDrift } from "./schema-drift.js";
import { SESSION_OPTIONS } from "./session-options.js";

/** A large transaction is written to the buffer in parts of this many changes (memory stays bounded). */
const PENDING_CHUNK = 5_000;

/**
 * `reloading`: a column was added to a followed table; the reader disconnected to read the tables
 * again and goes on under them.
 */
export type ReaderState = "starting" | "streaming" | "reconnecting" | "reloading" | "drift" | "stopped";

/** What a flush committed: the namespaces it touches, for the wake. */
export interface CommittedBatch {
  watermark: bigint;
  tenants: Set<string>;
  /** Some change reaches every namespace (a shared table, a TRUNCATE, no tenant rules). */
  shared: boolean;
  transactions: number;
  changes: number;
}

export interface ReaderOptions {
  databaseUrl: string;
  slot: string;
  publication: string;
  schema: string;
  plans: Map<string, TablePlan>;
  buffer: ChangeBuffer;
  retention: Retention;
  statusIntervalMs: number;
  random: () => number;
  logger: Logger;
  onCommitted(batch: CommittedBatch): void;
  /**
   * A column was added to a table whose every column is sent: reads the tables again into
   * `plans` (and resets the buffer). Without it, such a change is drift.
   */
  reloadTables?(drift: SchemaDrift): Promise<void>;
}

interface OpenTransaction {
  watermark: bigint;
  xid: number;
  changes: BufferedChange[];
  written: number;
  tenants: Set<string>;
  shared: boolean;
}

/** Reads pgoutput's values as the text PostgreSQL sent: the column codecs decode them. */
class TextPgoutputPlugin extends PgoutputPlugin {
  // biome-ignore lint/suspicious/noExplicitAny: the library's message union is untyped here
  override parse(buffer: Buffer): any {
    const message = super.parse(buffer);
    if (message.tag === "relation") {
      for (const column of message.columns) column.parser = (text: string) => text;
    }
    return message;
  }
}

/**
 * Follows the slot: decodes each transaction, appends it to the buffer and only then confirms
 * its LSN to PostgreSQL, so a crash anywhere loses nothing (the slot sends again what was not
 * confirmed) and repeats nothing (a transaction at or below the buffer's head is skipped).
 * Reconnects after any failure, waiting 1 s doubled per attempt plus jitter, at most 60 s.
 */
export class ReplicationReader {
  state: ReaderState = "starting";
  /** Failed attempts since the last successful connection. */
  attempts = 0;
  /** Connections lost or refused since start. */
  failures = 0;
  lastError: string | null = null;
  drift: SchemaDrift | null = null;
  /** The LSN confirmed to PostgreSQL. */
  confirmed = 0n;
  private service: LogicalReplicationService | null = null;
  private open: OpenTransaction | null = null;
  private skipping = false;
  private ready: (CommittedTransaction & { tenants: Set<string>; shared: boolean })[] = [];
  private flushScheduled = false;
  /** The newest flush's fsync and what follows it (the wake, the confirmation). */
  private durable: Promise<void> = Promise.resolve();
  private keepalive = 0n;
  /** A keepalive that came between transactions while earlier ones waited for their flush. */
  private heldKeepalive = 0n;
  private stopped = false;
  private wait: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private firstStart: { resolve: () => void; reject: (error: Error) => void } | null = null;
  /** The Relation message that showed an added column, while the tables are read again. */
  private addedColumn: { relation: RelationShape; drift: SchemaDrift } | null = null;

  constructor(private readonly options: ReaderOptions) {
    this.confirmed = options.buffer.durableLsn() ?? 0n;
  }

  /**
   * Starts following the slot. Resolves once the first connection streams; rejects (and stops)
   * when it fails, so a problem at start (a slot in use elsewhere, a refused login) is reported
   * to the caller. Later failures reconnect.
   */
  start(): Promise<void> {
    const first = new Promise<void>((resolve, reject) => {
      this.firstStart = { resolve, reject };
    });
    this.running ??= this.loop();
    return first;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.stream();
        if (this.state === "reloading" && !this.stopped) {
          if (await this.reload()) continue;
          break;
        }
        if (this.stopped || this.state === "drift") break;
        throw new Error("the replication connection closed");
      } catch (error) {
        if (this.state === "reloading" && !this.stopped) {
          if (await this.reload()) continue;
          break;
        }
        if (this.stopped || this.state === "drift") break;
        if (!this.started) {
          this.stopped = true;
          this.lastError = (error as Error).message;
          this.firstStart?.reject(error as Error);
          break;
        }
        this.failures++;
        this.attempts++;
        this.lastError = (error as Error).message;
        this.state = "reconnecting";
        const delayMs = retryDelayMs(this.attempts, this.options.random());
        this.options.logger.log("warn", {
          msg: "reconnecting",
          slot: this.options.slot,
          attempt: this.attempts,
          delayMs,
          error: this.lastError,
        });
        await this.sleep(delayMs);
      }
    }
    if (this.state !== "drift") {
      this.state = "stopped";
      this.addedColumn = null;
      if (this.started) this.options.logger.log("info", { msg: "stopped", slot: this.options.slot });
    }
    // A drift before the first start still ends `start()`: the caller sees it in status.
    this.firstStart?.resolve();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wait = null;
        resolve();
      }, ms);
      this.wait = { timer, resolve };
    });
  }

  /** One connection: streams until it fails or closes. */
  private async stream(): Promise<void> {
    const { buffer } = this.options;
    // Whatever a lost connection left half-received is sent again from the slot.
    this.open = null;
    this.skipping = false;
    this.ready = [];
    buffer.discardPending();
    const service = new LogicalReplicationService(
      { connectionString: this.options.databaseUrl, options: SESSION_OPTIONS },
      // The library's own acknowledgements would confirm what was received, not what is durable.
      { acknowledge: { auto: false, timeoutSeconds: 0 } },
    );
    this.service = service;
    const failed = new Promise<never>((_, reject) => service.on("error", reject));
    service.on("start", () => {
      this.options.logger.log("info", {
        msg: "connected",
        slot: this.options.slot,
        from: formatLsn(buffer.resumeLsn() ?? 0n),
        ...(this.attempts > 0 ? { afterAttempts: this.attempts } : {}),
      });
      this.started = true;
      this.firstStart?.resolve();
      this.state = "streaming";
      this.attempts = 0;
      this.lastError = null;
    });
    service.on("data", (_lsn: string, message: { tag: string }) => {
      try {
        this.handle(message);
      } catch (error) {
        service.emit("error", error);
      }
    });
    service.on("heartbeat", (lsn: string, _time: number, shouldRespond: boolean) => {
      // With no transaction open or waiting, every commit before this point is durable. After
      // drift it is not: the drifted transaction lies before it and must be sent again.
      if (!this.halted && this.open === null) {
        const at = parseLsn(lsn);
        // Commits received before it are still waiting for their flush: the position holds once
        // they are durable (PostgreSQL may send no other keepalive before the next write, and a
        // push waits for this one).
        if (this.ready.length > 0 || this.flushScheduled) {
          if (at > this.heldKeepalive) this.heldKeepalive = at;
        } else this.passKeepalive(at);
      }
      if (shouldRespond) this.sendStatus();
    });
    this.statusTimer = setInterval(() => this.sendStatus(), this.options.statusIntervalMs);
    try {
      const plugin = new TextPgoutputPlugin({
        protoVersion: 1,
        publicationNames: [this.options.publication],
      });
      const from = buffer.resumeLsn() ?? 0n;
      await Promise.race([service.subscribe(plugin, this.options.slot, formatLsn(from)), failed]);
    } finally {
      clearInterval(this.statusTimer);
      this.statusTimer = null;
      this.service = null;
      await service.destroy().catch(() => {});
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: pgoutput messages are checked by tag
  private handle(message: any): void {
    // After drift nothing more is read: a later commit confirmed past the drifted one would lose it.
    if (this.halted) return;
    switch (message.tag) {
      case "begin": {
        const watermark = parseLsn(message.commitLsn);
        const last =
          this.ready.length > 0
            ? this.ready[this.ready.length - 1]!.watermark
            : this.options.buffer.writtenHead;
        // Sent again after a crash or a lost connection: already buffered.
        this.skipping = watermark <= last;
        this.open = this.skipping
          ? null
          : { watermark, xid: message.xid, changes: [], written: 0, tenants: new Set(), shared: false };
        return;
      }
      case "relation": {
        const plan =
          message.schema === this.options.schema ? this.options.plans.get(message.name) : undefined;
        const drift = schemaDrift(message, plan);
        if (drift?.kind === "added" && this.options.reloadTables) this.stopToReload(message, drift);
        else if (drift) this.stopForDrift(drift);
        return;
      }
      case "insert":
      case "update":
      case "delete":
      case "truncate":
        if (this.skipping || this.open === null) return;
        for (const change of this.changesOf(message)) this.append(change);
        return;
      case "commit": {
        const open = this.open;
        this.open = null;
        if (this.skipping || open === null) return;
        this.ready.push({
          watermark: open.watermark,
          xid: open.xid,
          endLsn: parseLsn(message.commitEndLsn),
          changes: open.changes,
          firstSeq: open.written,
          total: open.written + open.changes.length,
          tenants: open.tenants,
          shared: open.shared,
        });
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          // Commits decoded from the same socket read are flushed together: one fsync for many.
          setImmediate(() => this.flush());
        }
        return;
      }
      default:
        return;
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: see handle
  private changesOf(message: any): BufferedChange[] {
    if (message.tag === "truncate") {
      return message.relations.map((relation: { name: string }) => ({
        tableName: relation.name,
        op: "TRUNCATE" as const,
        rowJson: null,
        oldKeyJson: null,
        keyChanged: false,
        newTenant: null,
        oldTenant: null,
        shared: true,
      }));
    }
    const plan = this.options.plans.get(message.relation.name)!;
    return [rowChange(plan, message)];
  }

  private append(change: BufferedChange): void {
    const open = this.open!;
    if (change.newTenant !== null) open.tenants.add(change.newTenant);
    if (change.oldTenant !== null) open.tenants.add(change.oldTenant);
    if (change.shared) open.shared = true;
    open.changes.push(change);
    if (open.changes.length >= PENDING_CHUNK) {
      this.options.buffer.writePending(open.watermark, open.written, open.changes);
      open.written += open.changes.length;
      open.changes = [];
    }
  }

  /** Every commit before `at` is buffered: the buffer stands there (see the heartbeat handler). */
  private passKeepalive(at: bigint): void {
    const service = this.service;
    try {
      this.options.buffer.advance(at);
    } catch (error) {
      service?.emit("error", error);
      return;
    }
    // Confirmed (and shown to namespaces) once durable.
    this.options.buffer.sync().then(
      () => {
        if (at > this.keepalive) this.keepalive = at;
      },
      (error) => service?.emit("error", error),
    );
  }

  private flush(): void {
    this.flushScheduled = false;
    const transactions = this.ready;
    const held = this.heldKeepalive;
    this.heldKeepalive = 0n;
    if (transactions.length === 0) {
      if (held > 0n && !this.halted) this.passKeepalive(held);
      return;
    }
    this.ready = [];
    const service = this.service;
    try {
      this.options.buffer.commit(transactions, Date.now());
    } catch (error) {
      // Not confirmed, so the slot sends these again on the next connection.
      service?.emit("error", error);
      return;
    }
    // Transactions after the held keepalive commit later than it, so it holds whatever came since.
    if (held > 0n && !this.halted) this.passKeepalive(held);
    const last = transactions[transactions.length - 1]!;
    const tenants = new Set<string>();
    let shared = false;
    let changes = 0;
    for (const tx of transactions) {
      for (const tenant of tx.tenants) tenants.add(tenant);
      shared ||= tx.shared;
      changes += tx.total;
    }
    const batch = { watermark: last.watermark, tenants, shared, transactions: transactions.length, changes };
    // Shown to namespaces, woken and confirmed to PostgreSQL only once durable; the fsync runs
    // off the event loop, so the next socket read is decoded meanwhile.
    this.durable = this.options.buffer.sync().then(
      () => {
        this.sendStatus();
        this.options.onCommitted(batch);
        this.options.buffer.prune(this.options.retention, Date.now());
      },
      (error) => {
        service?.emit("error", error);
      },
    );
  }

  /** Confirms to PostgreSQL what the buffer holds durably (or a keepalive past it). */
  private sendStatus(): void {
    const durable = this.options.buffer.durableLsn() ?? 0n;
    let position = durable > this.keepalive ? durable : this.keepalive;
    if (this.open !== null || this.ready.length > 0) position = durable;
    if (position === 0n || !this.service) return;
    if (position > this.confirmed) this.confirmed = position;
    // The library reports the LSN it is given plus one (the "next byte" convention): pass one
    // less, so that PostgreSQL resumes exactly at the end of the last durable commit.
    this.service.acknowledge(formatLsn(this.confirmed - 1n)).catch(() => {});
  }

  /** Drift or a reload: the drifted transaction lies ahead, so nothing past it is read or confirmed. */
  private get halted(): boolean {
    return this.state === "drift" || this.state === "reloading";
  }

  /**
   * A column was added to a table whose every column is sent: nothing of this transaction is
   * buffered or confirmed; the connection closes, and `reload` reads the tables again before the
   * slot sends the transaction again.
   */
  private stopToReload(relation: RelationShape, drift: SchemaDrift): void {
    this.options.logger.log("info", {
      msg: "column added",
      slot: this.options.slot,
      table: drift.table,
      column: drift.column,
      hint: "reading the tables again; every namespace takes a fresh snapshot",
    });
    this.addedColumn = { relation, drift };
    this.state = "reloading";
    this.open = null;
    this.skipping = true;
    this.service?.stop().catch(() => {});
  }

  /**
   * Flushes what was decoded before the added column, reads the tables again (the caller resets
   * the buffer), and goes on (true) when the Relation message now matches; else it is drift after
   * all (a column of another type than the catalog's, a type weir cannot carry).
   */
  private async reload(): Promise<boolean> {
    const { relation, drift } = this.addedColumn!;
    this.addedColumn = null;
    if (this.flushScheduled) this.flush();
    await this.durable;
    try {
      await this.options.reloadTables!(drift);
    } catch (error) {
      this.stopForDrift({
        ...drift,
        message: `${drift.message}, and reading it failed: ${(error as Error).message}`,
      });
      return false;
    }
    const still = schemaDrift(relation, this.options.plans.get(relation.name));
    if (still) {
      this.stopForDrift(still);
      return false;
    }
    this.state = "reconnecting";
    return true;
  }

  private stopForDrift(drift: SchemaDrift): void {
    this.options.logger.log("error", {
      msg: "drift",
      slot: this.options.slot,
      table: drift.table,
      column: drift.column,
      error: drift.message,
      hint: "replication stopped before this transaction: fix the options (or weir's schema) and restart",
    });
    this.drift = drift;
    this.state = "drift";
    this.lastError = drift.message;
    // Nothing of the transaction is buffered or confirmed: after a fix and a restart, the slot
    // sends it again.
    this.open = null;
    this.skipping = true;
    this.service?.stop().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wait) {
      clearTimeout(this.wait.timer);
      this.wait.resolve();
    }
    if (this.flushScheduled) this.flush();
    // What was buffered is confirmed before the connection closes.
    await this.durable;
    await this.service?.stop().catch(() => {});
    await this.running;
  }
}
