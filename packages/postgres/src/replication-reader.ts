import { retryDelayMs } from "@weir/protocol";
import { LogicalReplicationService } from "pg-logical-replication";
import type { ChangeBuffer } from "./change-buffer.js";
import type { Retention } from "./change-buffer-schema.js";
import { CommitPipeline, type CommittedBatch } from "./commit-pipeline.js";
import type { Logger } from "./logger.js";
import { formatLsn, parseLsn } from "./lsn.js";
import { appendChange, changesOf, type OpenTransaction, TextPgoutputPlugin } from "./pgoutput-changes.js";
import type { TablePlan } from "./read-tables.js";
import { ReaderLifecycle, type ReaderState } from "./reader-state.js";
import { type RelationShape, type SchemaDrift, schemaDrift } from "./schema-drift.js";
import { SESSION_OPTIONS } from "./session-options.js";

export type { ReaderState } from "./reader-state.js";

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

/**
 * Where the decoding of the stream stands: between transactions, inside one being collected, or
 * inside one sent again (already buffered) or cut off (drift), whose changes are passed over.
 */
type Decoding = { kind: "between" } | { kind: "open"; tx: OpenTransaction } | { kind: "skipping" };

/**
 * Follows the slot: decodes each transaction, appends it to the buffer and only then confirms
 * its LSN to PostgreSQL, so a crash anywhere loses nothing (the slot sends again what was not
 * confirmed) and repeats nothing (a transaction at or below the buffer's head is skipped).
 * Reconnects after any failure, waiting 1 s doubled per attempt plus jitter, at most 60 s. Its
 * lifecycle is a `ReaderLifecycle`; commits go through a `CommitPipeline`.
 */
export class ReplicationReader {
  private readonly life = new ReaderLifecycle();
  private readonly pipeline: CommitPipeline;
  private decoding: Decoding = { kind: "between" };
  /** The LSN confirmed to PostgreSQL. */
  confirmed = 0n;
  private service: LogicalReplicationService | null = null;
  /**
   * The connection once it streams. Until then its library cannot stop it: stopped while it
   * connects, it forgets the client it is connecting and streams on regardless. So a stop
   * requested meanwhile is carried out when it starts streaming.
   */
  private live: LogicalReplicationService | null = null;
  private stopRequested = false;
  private wait: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private running: Promise<void> | null = null;
  private firstStart: { resolve: () => void; reject: (error: Error) => void } | null = null;

  constructor(private readonly options: ReaderOptions) {
    this.confirmed = options.buffer.durableLsn() ?? 0n;
    this.pipeline = new CommitPipeline({
      buffer: options.buffer,
      retention: options.retention,
      confirm: () => this.sendStatus(),
      onCommitted: (batch) => options.onCommitted(batch),
      halted: () => this.life.halted,
    });
  }

  get state(): ReaderState {
    return this.life.state;
  }
  /** Failed attempts since the last successful connection. */
  get attempts(): number {
    return this.life.attempts;
  }
  /** Connections lost or refused since start. */
  get failures(): number {
    return this.life.failures;
  }
  get lastError(): string | null {
    return this.life.lastError;
  }
  get drift(): SchemaDrift | null {
    return this.life.drift;
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
    while (!this.stopRequested) {
      let error: unknown = new Error("the replication connection closed");
      try {
        await this.stream();
      } catch (thrown) {
        error = thrown;
      }
      if (this.stopRequested || this.life.state === "drift") break;
      if (this.life.state === "reloading") {
        if (await this.reload()) continue;
        break;
      }
      const message = (error as Error).message;
      if (!this.life.started) {
        this.stopRequested = true;
        this.life.failedAtStart(message);
        this.firstStart?.reject(error as Error);
        break;
      }
      this.life.connectionLost(message);
      const delayMs = retryDelayMs(this.life.attempts, this.options.random());
      this.options.logger.log("warn", {
        msg: "reconnecting",
        slot: this.options.slot,
        attempt: this.life.attempts,
        delayMs,
        error: message,
      });
      await this.sleep(delayMs);
    }
    const wasStreaming = this.life.started && this.life.state !== "drift";
    this.life.ended();
    if (wasStreaming) this.options.logger.log("info", { msg: "stopped", slot: this.options.slot });
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

  /** Fails the connection `service` (the one current when the work began). */
  private failer(): (error: unknown) => void {
    const service = this.service;
    return (error) => service?.emit("error", error);
  }

  /** One connection: streams until it fails or closes. */
  private async stream(): Promise<void> {
    const { buffer } = this.options;
    // Whatever a lost connection left half-received is sent again from the slot.
    this.decoding = { kind: "between" };
    this.pipeline.restart();
    buffer.discardPending();
    const service = new LogicalReplicationService(
      { connectionString: this.options.databaseUrl, options: SESSION_OPTIONS },
      // The library's own acknowledgements would confirm what was received, not what is durable.
      { acknowledge: { auto: false, timeoutSeconds: 0 } },
    );
    this.service = service;
    const fail = (error: unknown) => service.emit("error", error);
    const failed = new Promise<never>((_, reject) => service.on("error", reject));
    service.on("start", () => {
      if (this.stopRequested) {
        service.stop().catch(() => {});
        return;
      }
      this.live = service;
      this.options.logger.log("info", {
        msg: "connected",
        slot: this.options.slot,
        from: formatLsn(buffer.resumeLsn() ?? 0n),
        ...(this.life.attempts > 0 ? { afterAttempts: this.life.attempts } : {}),
      });
      this.life.connected();
      this.firstStart?.resolve();
    });
    service.on("data", (_lsn: string, message: { tag: string }) => {
      try {
        this.handle(message, fail);
      } catch (error) {
        fail(error);
      }
    });
    service.on("heartbeat", (lsn: string, _time: number, shouldRespond: boolean) => {
      // With no transaction open or waiting, every commit before this point is durable. After
      // drift it is not: the drifted transaction lies before it and must be sent again.
      if (!this.life.halted && this.decoding.kind !== "open") this.pipeline.keepaliveAt(parseLsn(lsn), fail);
      if (shouldRespond) this.sendStatus();
    });
    const statusTimer = setInterval(() => this.sendStatus(), this.options.statusIntervalMs);
    try {
      const plugin = new TextPgoutputPlugin({
        protoVersion: 1,
        publicationNames: [this.options.publication],
      });
      const from = buffer.resumeLsn() ?? 0n;
      await Promise.race([service.subscribe(plugin, this.options.slot, formatLsn(from)), failed]);
    } finally {
      clearInterval(statusTimer);
      this.service = null;
      this.live = null;
      await service.destroy().catch(() => {});
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: pgoutput messages are checked by tag
  private handle(message: any, fail: (error: unknown) => void): void {
    // After drift nothing more is read: a later commit confirmed past the drifted one would lose it.
    if (this.life.halted) return;
    switch (message.tag) {
      case "begin": {
        const watermark = parseLsn(message.commitLsn);
        // Sent again after a crash or a lost connection: already buffered.
        this.decoding =
          watermark <= this.pipeline.newestWatermark
            ? { kind: "skipping" }
            : {
                kind: "open",
                tx: {
                  watermark,
                  xid: message.xid,
                  changes: [],
                  written: 0,
                  tenants: new Set(),
                  shared: false,
                },
              };
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
        if (this.decoding.kind !== "open") return;
        for (const change of changesOf(this.options.plans, message))
          appendChange(this.options.buffer, this.decoding.tx, change);
        return;
      case "commit": {
        const decoding = this.decoding;
        this.decoding = { kind: "between" };
        if (decoding.kind !== "open") return;
        const { tx } = decoding;
        this.pipeline.committed(
          {
            watermark: tx.watermark,
            xid: tx.xid,
            endLsn: parseLsn(message.commitEndLsn),
            changes: tx.changes,
            firstSeq: tx.written,
            total: tx.written + tx.changes.length,
            tenants: tx.tenants,
            shared: tx.shared,
          },
          fail,
        );
        return;
      }
      default:
        return;
    }
  }

  /** Confirms to PostgreSQL what the buffer holds durably (or a keepalive past it). */
  private sendStatus(): void {
    const position = this.pipeline.position(this.decoding.kind === "open");
    if (position === null || !this.service) return;
    if (position > this.confirmed) this.confirmed = position;
    // The library reports the LSN it is given plus one (the "next byte" convention): pass one
    // less, so that PostgreSQL resumes exactly at the end of the last durable commit.
    this.service.acknowledge(formatLsn(this.confirmed - 1n)).catch(() => {});
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
    this.life.columnAdded(relation, drift);
    this.decoding = { kind: "skipping" };
    this.service?.stop().catch(() => {});
  }

  /**
   * Flushes what was decoded before the added column, reads the tables again (the caller resets
   * the buffer), and goes on (true) when the Relation message now matches; else it is drift after
   * all (a column of another type than the catalog's, a type weir cannot carry).
   */
  private async reload(): Promise<boolean> {
    const phase = this.life.phase;
    if (phase.state !== "reloading") return false;
    const { relation, drift } = phase;
    await this.pipeline.settle(this.failer());
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
    this.life.reloaded();
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
    this.life.drifted(drift);
    // Nothing of the transaction is buffered or confirmed: after a fix and a restart, the slot
    // sends it again.
    this.decoding = { kind: "skipping" };
    this.service?.stop().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.wait) {
      clearTimeout(this.wait.timer);
      this.wait.resolve();
    }
    // What was buffered is confirmed before the connection closes.
    await this.pipeline.settle(this.failer());
    await this.live?.stop().catch(() => {});
    await this.running;
  }
}
