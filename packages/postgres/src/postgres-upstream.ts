import { createHash } from "node:crypto";
import {
  encodeWatermark,
  MAX_UPSTREAM_LIMIT,
  UpstreamCallError,
  UpstreamGoneError,
  type UpstreamSource,
} from "@weir/protocol";
import pg from "pg";
import { ChangeBuffer } from "./change-buffer.js";
import { checkReplicationSupport } from "./check-replication-support.js";
import { dropReplication } from "./drop-replication.js";
import { ensureReplication } from "./ensure-replication.js";
import { type HttpNotifier, httpNotifier } from "./http-notifier.js";
import type { Logger } from "./logger.js";
import { formatLsn } from "./lsn.js";
import { readNamespaceChanges } from "./read-namespace-changes.js";
import { readSnapshotPage } from "./read-snapshot-page.js";
import { readTables, type TablePlan } from "./read-tables.js";
import { ReplicationReader } from "./replication-reader.js";
import { SESSION_OPTIONS } from "./session-options.js";
import { checkSourceNamespace } from "./source-namespace.js";
import { UnservableTenants } from "./unservable-tenants.js";
import type { PostgresUpstream, UpstreamSchema } from "./upstream-interface.js";
import { upstreamMetrics } from "./upstream-metrics.js";
import {
  DEFAULT_RETENTION,
  type PostgresUpstreamOptions,
  type ResolvedOptions,
  resolveOptions,
  tableOptions,
} from "./upstream-options.js";
import { ConnectedPorts, ServedPorts } from "./upstream-port.js";
import type { UpstreamStatus } from "./upstream-status.js";
import { upstreamInThread } from "./upstream-thread.js";

export type { PostgresUpstream, UpstreamSchema } from "./upstream-interface.js";

const SILENT: Logger = { log() {} };

/** Namespace cursors are written to the buffer at most this often. */
const CURSOR_SAVE_MS = 5_000;

/**
 * What the buffered rows were encoded under. The table's oid and each column's position tell a
 * table or a column dropped and created again under the same name: its rows or values changed
 * in PostgreSQL without a change the stream carries.
 */
function configKey(plans: TablePlan[]): string {
  const shape = plans.map((plan) => ({
    table: `${plan.schema}.${plan.name}`,
    oid: plan.oid,
    columns: plan.columns.map((c) => [c.name, c.typeOid, c.position, c.codec.weirType]),
    key: plan.primaryKey,
    tenant: plan.tenantColumn,
  }));
  return createHash("sha256").update(JSON.stringify(shape)).digest("hex");
}

function positiveLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_UPSTREAM_LIMIT) {
    throw new UpstreamCallError(
      400,
      "bad_request",
      `limit must be an integer from 1 to ${MAX_UPSTREAM_LIMIT}`,
    );
  }
  return limit;
}

/**
 * Follows a PostgreSQL database through logical replication (pgoutput) into a durable change
 * buffer, and serves weir's upstream contract from it to any number of namespaces, each at its
 * own pace. Creates the publication and the slot when absent. Throws, naming the fix, when the
 * server or the tables cannot be followed. Runs in a worker thread of its own unless `thread`
 * is false.
 */
export async function postgresUpstream(input: PostgresUpstreamOptions): Promise<PostgresUpstream> {
  const options = resolveOptions(input);
  return options.thread ? upstreamInThread(input) : followInThisThread(options);
}

async function followInThisThread(options: ResolvedOptions): Promise<PostgresUpstream> {
  const tables = tableOptions(options);
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  const tenants = new UnservableTenants();
  const admin = new pg.Client({ connectionString: options.databaseUrl, options: SESSION_OPTIONS });
  await admin.connect();
  const logger = options.logger ?? SILENT;
  let plans: TablePlan[];
  let buffer: ChangeBuffer;
  try {
    await checkReplicationSupport(admin);
    plans = await readTables(admin, options.schema, tables, options.setReplicaIdentity);
    await tenants.countAtStart(admin, options.schema, plans);
    const setup = await ensureReplication(admin, {
      slot: options.slot,
      publication: options.publication,
      schema: options.schema,
      tables: [...tables.keys()],
    });
    buffer = new ChangeBuffer(options.bufferFile, {
      slot: options.slot,
      publication: options.publication,
      configKey: configKey(plans),
    });
    buffer.tenants = tenants;
    if (!buffer.initialized) buffer.initialize(setup.slotPosition);
    else if (setup.createdSlot) {
      buffer.restartAt(setup.slotPosition);
      buffer.resetReason = "the slot was created anew: changes from before it were dropped";
      logger.log("warn", { msg: "slot reset", slot: options.slot, reason: buffer.resetReason });
    }
    if (buffer.resetReason !== null && !setup.createdSlot) {
      // The raised floor is the end of the stream read. A transaction still open could commit
      // right there after a snapshot was served, below every snapshot's watermark: a commit of
      // an empty transaction now takes that place (a transaction with an id writes a commit).
      await admin.query("SELECT txid_current()");
      logger.log("warn", {
        msg: "buffer reset",
        reason: buffer.resetReason,
        floor: encodeWatermark(buffer.floor),
        hint: "every namespace gets 410 for its cursor and takes a fresh snapshot",
      });
    }
  } finally {
    await admin.end();
  }
  const planByName = new Map(plans.map((plan) => [plan.name, plan]));
  const tenantMode = plans.some((plan) => plan.tenantColumn !== null);
  const cursors = buffer.cursors();
  let cursorsDirty = false;
  const committed = { transactions: 0, changes: 0 };
  const notifier: HttpNotifier | null = options.notify ? httpNotifier(options.notify) : null;

  const reader = new ReplicationReader({
    databaseUrl: options.databaseUrl,
    slot: options.slot,
    publication: options.publication,
    schema: options.schema,
    plans: planByName,
    buffer,
    retention,
    statusIntervalMs: options.statusIntervalMs,
    random: options.random ?? Math.random,
    logger,
    async reloadTables(drift) {
      // The same checks as at start, on the catalog as it is now (a type weir cannot carry is
      // drift after all). The reader is disconnected meanwhile, as across a restart.
      const client = new pg.Client({ connectionString: options.databaseUrl, options: SESSION_OPTIONS });
      await client.connect();
      try {
        const fresh = await readTables(client, options.schema, tables, false);
        const reason = `the columns of ${drift.table} changed (${drift.table}.${drift.column} was added): buffered changes were dropped`;
        // The new columns before the raised floor: a namespace it sends to a fresh snapshot
        // reads them. Set after it (past the await below), a snapshot taken meanwhile read the
        // old columns, at a watermark past the floor, and the namespace never had the new
        // column's values of the rows no later change touched.
        plans = fresh;
        planByName.clear();
        for (const plan of fresh) planByName.set(plan.name, plan);
        if (buffer.reencode(configKey(fresh), reason)) {
          // As at start: an empty transaction takes the raised floor's place.
          await client.query("SELECT txid_current()");
          logger.log("warn", {
            msg: "buffer reset",
            reason,
            floor: encodeWatermark(buffer.floor),
            hint: "every namespace gets 410 for its cursor and takes a fresh snapshot",
          });
        }
      } finally {
        await client.end().catch(() => {});
      }
    },
    onCommitted(batch) {
      committed.transactions += batch.transactions;
      committed.changes += batch.changes;
      // Changes for every namespace wake every namespace known to this upstream: those
      // configured, and those that asked for changes.
      const namespaces = new Set(tenantMode ? batch.tenants : []);
      if (!tenantMode || batch.shared) {
        for (const namespace of options.namespaces) namespaces.add(namespace);
        for (const namespace of cursors.keys()) namespaces.add(namespace);
      }
      if (namespaces.size === 0) return;
      const list = [...namespaces];
      try {
        options.onCommit?.(list, batch.watermark);
      } catch {}
      notifier?.notify(list, batch.watermark);
    },
  });
  try {
    await reader.start();
  } catch (error) {
    buffer.close();
    throw error;
  }
  const pool = new pg.Pool({ connectionString: options.databaseUrl, options: SESSION_OPTIONS, max: 4 });
  // An idle connection that PostgreSQL closes (a restart) must not crash the process.
  pool.on("error", () => {});
  const saveTimer = setInterval(() => {
    if (!cursorsDirty) return;
    cursorsDirty = false;
    buffer.saveCursors(cursors);
  }, CURSOR_SAVE_MS);
  saveTimer.unref();
  let closed = false;

  const source = (namespace: string): UpstreamSource => {
    checkSourceNamespace(namespace);
    return {
      async changes(watermark, limit) {
        positiveLimit(limit);
        if (typeof watermark !== "bigint" || watermark < 0n) {
          throw new UpstreamCallError(400, "bad_request", "watermark must be a non-negative integer");
        }
        if (closed) throw new UpstreamCallError(503, "upstream_unavailable", "the upstream is closed");
        if (watermark < buffer.floor) throw new UpstreamGoneError(buffer.floor, watermark);
        if (watermark > buffer.through) {
          throw new UpstreamCallError(
            409,
            "conflict",
            `watermark ${watermark} is ahead of this upstream's newest, ${buffer.through}: it comes from another upstream or a replaced buffer`,
          );
        }
        cursors.set(namespace, { watermark, at: Date.now() });
        cursorsDirty = true;
        return readNamespaceChanges(buffer, tenantMode ? namespace : undefined, watermark, limit);
      },
      async snapshotPage(table, cursor, limit) {
        positiveLimit(limit);
        const plan = planByName.get(table);
        if (!plan) {
          throw new UpstreamCallError(
            404,
            "not_found",
            `unknown table ${table}; this upstream serves ${[...planByName.keys()].join(", ")}`,
          );
        }
        if (closed) throw new UpstreamCallError(503, "upstream_unavailable", "the upstream is closed");
        return readSnapshotPage(pool, buffer, plan, tenantMode ? namespace : undefined, cursor, limit);
      },
    };
  };

  const status = async (): Promise<UpstreamStatus> => {
    let slotLagBytes: number | null = null;
    if (!closed) {
      try {
        const { rows } = await pool.query<{ lag: string | null }>(
          "SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::text AS lag FROM pg_replication_slots WHERE slot_name = $1",
          [options.slot],
        );
        if (rows[0]?.lag) slotLagBytes = Number(rows[0].lag);
      } catch {}
    }
    const stats = closed ? { changes: 0, transactions: 0, bytes: 0 } : buffer.stats();
    return {
      state: reader.state,
      slot: options.slot,
      publication: options.publication,
      tables: plans.map((plan) => plan.name),
      slotLagBytes,
      confirmedLsn: formatLsn(reader.confirmed),
      buffer: {
        file: options.bufferFile,
        ...stats,
        oldestWatermark: encodeWatermark(buffer.floor),
        newestWatermark: encodeWatermark(buffer.head),
        resetReason: buffer.resetReason,
      },
      namespaces: Object.fromEntries(
        [...cursors].map(([namespace, cursor]) => [
          namespace,
          { watermark: encodeWatermark(cursor.watermark), at: new Date(cursor.at).toISOString() },
        ]),
      ),
      reconnect: { attempts: reader.attempts, failures: reader.failures },
      lastError: reader.lastError,
      drift: reader.drift,
      committed: { ...committed },
      notify: notifier ? { ...notifier.stats } : null,
      tenants: tenants.status(),
      thread: null,
    };
  };

  const close = async () => {
    if (closed) return;
    closed = true;
    connected.close();
    served.close();
    clearInterval(saveTimer);
    await reader.stop();
    await notifier?.close();
    await pool.end().catch(() => {});
    buffer.saveCursors(cursors);
    buffer.close();
  };

  const upstream: PostgresUpstream = {
    source,
    status,
    connect: () => connected.connect(),
    // Read again when a column is added upstream.
    get schema(): UpstreamSchema {
      return {
        tables: Object.fromEntries(
          plans.map((plan) => [
            plan.name,
            {
              columns: Object.fromEntries(
                plan.columns.map((c) => [
                  c.name,
                  c.nullable ? { type: c.codec.weirType, nullable: true as const } : c.codec.weirType,
                ]),
              ),
              primaryKey: plan.primaryKey,
            },
          ]),
        ),
      };
    },
    metrics: upstreamMetrics(status),
    close,
    async dropReplication() {
      await close();
      return dropReplication({
        databaseUrl: options.databaseUrl,
        slot: options.slot,
        publication: options.publication,
      });
    },
  };
  const served = new ServedPorts(() => upstream);
  const connected = new ConnectedPorts(() => served.connect());
  return upstream;
}
