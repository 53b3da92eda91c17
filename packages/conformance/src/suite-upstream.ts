import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Schema } from "@weir/engine-wasm";
import { UpstreamCallError, type UpstreamSource } from "@weir/protocol";
import { createUpstreamServer, type SqliteUpstream, sqliteUpstream } from "@weir/upstream";
import { CONFORMANCE_SCHEMA, CONFORMANCE_UPSTREAM_TOKEN, isReplica } from "./conformance-config.js";

/**
 * What the suite's upstream serves: the app's tables, and one the app does not model (`audit`),
 * whose changes must only move the cursor. Namespaces named `up-drift*` have a `todo` with a
 * column the app does not know.
 */
function upstreamSchema(namespace: string): Schema {
  const tables = { ...CONFORMANCE_SCHEMA.tables };
  const audit = { columns: { id: "integer", what: "string" }, primaryKey: ["id"] } as const;
  if (namespace.startsWith("up-drift")) {
    const todo = tables.todo!;
    return {
      tables: {
        ...tables,
        todo: { ...todo, columns: { ...todo.columns, color: { type: "string", nullable: true } } },
        audit,
      },
    };
  }
  return { tables: { ...tables, audit } };
}

/** One upstream call as the suite's upstream saw it. */
interface UpstreamCall {
  route: "changes" | "snapshot";
  limit: number;
  /** Epoch ms. */
  at: number;
}

/**
 * One namespace's upstream: a real SQLite source (`@weir/upstream`), and the misbehaviour a test
 * asks of it.
 */
export class SuiteUpstreamNamespace implements UpstreamSource {
  readonly calls: UpstreamCall[] = [];
  /** Refusals for the next calls of a route, in order. */
  readonly refusals: Array<{ route: UpstreamCall["route"]; status: number; retryAfterMs?: number }> = [];
  /** Snapshot pages asked for more rows than this answer 503. */
  snapshotRowLimit = Number.POSITIVE_INFINITY;
  /** Each snapshot page waits this long before it answers. */
  snapshotDelayMs = 0;
  /** Changes pages answer one change at the asked watermark (a cursor that does not move). */
  stall = false;

  constructor(readonly source: SqliteUpstream) {}

  /** Runs `write` on the app's database in one transaction and publishes it as one watermark. */
  commit(write: (db: SqliteUpstream["db"]) => void): bigint {
    this.source.db.transaction(() => write(this.source.db))();
    return this.source.publish();
  }

  /** Rows of the conformance `todo` table, written as one upstream transaction. */
  commitTodos(rows: Array<{ id: string; owner: string; text?: string; sort?: number }>): bigint {
    return this.commit((db) => {
      const upsert = db.prepare(
        "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, 0, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, text = excluded.text, sort = excluded.sort",
      );
      for (const row of rows) upsert.run(row.id, row.owner, row.text ?? "", row.sort ?? 0);
    });
  }

  private refuse(route: UpstreamCall["route"]): void {
    const index = this.refusals.findIndex((refusal) => refusal.route === route);
    if (index < 0) return;
    const [refusal] = this.refusals.splice(index, 1);
    throw new UpstreamCallError(refusal!.status, "refused", "refused on purpose", refusal!.retryAfterMs);
  }

  async changes(watermark: bigint, limit: number) {
    this.calls.push({ route: "changes", limit, at: Date.now() });
    this.refuse("changes");
    if (this.stall) {
      return {
        watermark,
        changes: [
          {
            watermark,
            tableName: "audit",
            op: "INSERT" as const,
            rowData: { id: 1, what: "again" },
            oldData: null,
          },
        ],
      };
    }
    return this.source.changes(watermark, limit);
  }

  async snapshotPage(table: string, cursor: string | null, limit: number) {
    this.calls.push({ route: "snapshot", limit, at: Date.now() });
    this.refuse("snapshot");
    if (limit > this.snapshotRowLimit) {
      throw new UpstreamCallError(503, "too_big", `pages of ${limit} rows are too big for this upstream`);
    }
    if (this.snapshotDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.snapshotDelayMs));
    return this.source.snapshotPage(table, cursor, limit);
  }
}

/** The upstream the suite runs beside the host: one SQLite source per namespace, over HTTP. */
export interface SuiteUpstream {
  /** The base URL: a namespace's upstream is `<url>/<namespace>`. */
  readonly url: string;
  readonly token: string;
  namespace(name: string): SuiteUpstreamNamespace;
  close(): Promise<void>;
}

/** Keeps this many watermarks in `up-gone*` namespaces, so that a test can outrun it. */
const GONE_KEEP = 3;

export async function startSuiteUpstream(): Promise<SuiteUpstream> {
  const dir = mkdtempSync(join(tmpdir(), "weir-suite-upstream-"));
  const namespaces = new Map<string, SuiteUpstreamNamespace>();
  const namespace = (name: string) => {
    let found = namespaces.get(name);
    if (!found) {
      found = new SuiteUpstreamNamespace(
        sqliteUpstream({
          file: join(dir, `${name}.sqlite`),
          schema: upstreamSchema(name),
          ...(name.startsWith("up-gone") ? { keepWatermarks: GONE_KEEP } : {}),
        }),
      );
      namespaces.set(name, found);
    }
    return found;
  };
  const server = createUpstreamServer({
    source: (name) => (isReplica(name) ? namespace(name) : null),
    token: CONFORMANCE_UPSTREAM_TOKEN,
  });
  const { url } = await server.listen();
  return {
    url,
    token: CONFORMANCE_UPSTREAM_TOKEN,
    namespace,
    async close() {
      await server.close();
      for (const found of namespaces.values()) found.source.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
