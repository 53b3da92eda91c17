import type { PullInput, QueryPatchOp, Schema, Visibility } from "../src/types.js";
import type { Namespace } from "./fixtures.js";

/** A small chat schema for query-aware pull tests: channels, messages and their authors. */
export const chatSchema = {
  tables: {
    channel: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
    message: {
      columns: { id: "string", channelId: "string", authorId: "string", at: "integer", text: "string" },
      primaryKey: ["id"],
    },
    user: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
  },
} satisfies Schema;

/** The last `limit` messages of a channel, newest first, with their authors. */
export function channelMessages(channelId: string, limit: number) {
  return {
    table: "message",
    where: equals("channelId", channelId),
    orderBy: [["at", "desc"]],
    limit,
    related: [
      { correlation: { parentField: ["authorId"], childField: ["id"] }, subquery: { table: "user" } },
    ],
  };
}

/** The users whose name is LIKE `pattern`. */
export function usersNamedLike(pattern: string) {
  return { table: "user", where: condition("LIKE", "name", pattern) };
}

/** A simple condition `column <op> value`. */
function condition(op: string, column: string, value: string) {
  return {
    type: "simple",
    op,
    left: { type: "column", name: column },
    right: { type: "literal", value },
  };
}

/** A simple condition `column = value`. */
function equals(column: string, value: string) {
  return condition("=", column, value);
}

/** Messages in a channel named `name`: an EXISTS on channel, correlated by the channel's key. */
export function messagesInChannelsNamed(name: string) {
  return {
    table: "message",
    where: {
      type: "correlatedSubquery",
      op: "EXISTS",
      related: {
        correlation: { parentField: ["channelId"], childField: ["id"] },
        subquery: { table: "channel", where: equals("name", name) },
      },
    },
  };
}

/** Channels `authorId` wrote in: an EXISTS on message, naming the channel by its key. */
export function channelsWrittenBy(authorId: string) {
  return {
    table: "channel",
    where: {
      type: "correlatedSubquery",
      op: "EXISTS",
      related: {
        correlation: { parentField: ["id"], childField: ["channelId"] },
        subquery: { table: "message", where: equals("authorId", authorId) },
      },
    },
  };
}

/** A client's copy of its rows, kept by applying pull answers as a client would. */
export class ClientRows {
  rows = new Map<string, unknown>();
  cookie: number | null = null;

  apply(
    body: {
      cookie: number;
      rowsPatch?: {
        op: string;
        tableName?: string;
        value?: Record<string, unknown>;
        id?: Record<string, unknown>;
      }[];
    },
    schema: Schema,
  ): void {
    this.cookie = body.cookie;
    for (const op of body.rowsPatch ?? []) {
      if (op.op === "clear") this.rows.clear();
      else {
        const table = schema.tables[op.tableName!]!;
        const source = op.op === "put" ? op.value! : op.id!;
        const key = `${op.tableName}/${JSON.stringify(table.primaryKey.map((column) => source[column]))}`;
        if (op.op === "put") this.rows.set(key, op.value);
        else this.rows.delete(key);
      }
    }
  }

  keys(): string[] {
    return [...this.rows.keys()].sort();
  }
}

/**
 * Clients of several groups of one namespace, each subscribing to `put` on its first pull, and
 * the rows a query holds now as a client keys them (to compare with a client's).
 */
export function groupClients(ns: Namespace, put: Extract<QueryPatchOp, { op: "put" }>) {
  const clients = new Map<string, ClientRows>();
  /** Pulls for `group` (subscribing it to the query on its first pull), as a client would. */
  const pull = (group: string, input: Partial<PullInput> = {}) => {
    const client = clients.get(group) ?? new ClientRows();
    const first = !clients.has(group);
    clients.set(group, client);
    const result = ns.pull({
      cookie: client.cookie,
      clientGroupID: group,
      queries: { patch: first ? [put] : [] },
      ...input,
    });
    if (!result.json.unchanged) client.apply(result.json as never, ns.schema);
    return result;
  };
  /** The rows `ast` holds now, under `visibility`, as the client keys them. */
  const expected = (visibility?: Visibility, ast: unknown = put.ast) =>
    [
      ...new Set(
        ns.engine
          .queryRows(ns.db.adapter, ast, visibility ? { visibility } : {})
          .map((row) => `${row.table}/${JSON.stringify(row.key)}`),
      ),
    ].sort();
  const keys = (group: string) => clients.get(group)!.keys();
  /** The rows the group's client holds, with their values. */
  const rows = (group: string) => clients.get(group)!.rows;
  return { pull, expected, keys, rows };
}
