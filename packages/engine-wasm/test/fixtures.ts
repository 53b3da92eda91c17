import type { Engine } from "../src/engine.js";
import type { PullInput, PullResult, Schema, SqlValue } from "../src/types.js";
import type { TestDatabase } from "./databases.js";

export const todoSchema = {
  tables: {
    todo: {
      columns: { id: "string", owner: "string", text: "string", done: "boolean", sort: "number" },
      primaryKey: ["id"],
    },
  },
} satisfies Schema;

export const ownerFilter = (userID: string) => ({ todo: { sql: "owner = ?", params: [userID] } });

/** A namespace under test: one database, the engine, and the steps a host would take. */
export class Namespace {
  /** The last mutation id of each client, as a client would keep it. */
  nextID = new Map<string, number>();

  constructor(
    readonly engine: Engine,
    readonly db: TestDatabase,
    readonly schema: Schema,
  ) {
    db.transaction(() => engine.install(db.adapter, schema));
  }

  /** Runs `write` as mutation of `clientID` in one transaction, as a host's push would. */
  mutate(
    clientGroupID: string,
    clientID: string,
    write: (sql: (sql: string, params?: SqlValue[]) => void) => void,
  ): number {
    const mutationID = (this.nextID.get(clientID) ?? 0) + 1;
    const ref = { clientGroupID, clientID, mutationID };
    this.db.transaction(() => {
      const preflight = this.engine.preflight(this.db.adapter, ref);
      if (preflight.status !== "apply") throw new Error(`unexpected preflight ${preflight.status}`);
      write((sql, params = []) => this.db.adapter.exec(sql, params));
      this.engine.finalize(this.db.adapter, ref);
    });
    this.nextID.set(clientID, mutationID);
    return mutationID;
  }

  /** Runs raw SQL as a one-statement mutation. */
  sql(sql: string, params: SqlValue[] = [], clientID = "writer"): void {
    this.mutate("writer-group", clientID, (run) => run(sql, params));
  }

  pull(input: Partial<PullInput> & { cookie: number | null }): PullResult & { json: PullBody } {
    const result = this.db.transaction(() =>
      this.engine.pull(this.db.adapter, { clientGroupID: "g", userID: "u", ...input }),
    );
    return { ...result, json: JSON.parse(result.body) };
  }
}

export interface PullBody {
  cookie: number;
  unchanged?: true;
  lastMutationIDChanges?: Record<string, number>;
  gotQueries?: string[];
  rowsPatch?: Array<{
    op: string;
    tableName?: string;
    value?: Record<string, unknown>;
    id?: Record<string, unknown>;
  }>;
  patch?: Array<{ op: string; key?: string; value?: unknown }>;
}

/** A table of every column type a visibility filter may compare, for typed-filter tests. */
export const cardSchema = {
  tables: {
    card: {
      columns: {
        id: "string",
        uid: "integer",
        score: "number",
        flag: "boolean",
        label: { type: "string", nullable: true },
        data: { type: "bytes", nullable: true },
      },
      primaryKey: ["id"],
    },
  },
} satisfies Schema;
