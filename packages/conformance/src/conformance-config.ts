import type { Schema } from "@weir/engine-wasm";
import {
  type Claims,
  httpUpstream,
  isUserID,
  MutatorError,
  type MutatorTx,
  type WeirConfig,
} from "@weir/host-core";

export const CONFORMANCE_ADMIN_KEY = "conformance-admin-key";
/**
 * A card is visible to its `uid` (the user id, a string, compared with an integer column), and
 * to the user whose score (a string here, compared with a REAL) it has when flagged. The scores
 * are told apart only at full precision.
 */
export const CONFORMANCE_CARD_SCORES: Record<string, string> = {
  "1": String(0.1 + 0.2),
  "2": String(1 / 3),
  "3": "0.3",
};

/**
 * The claims of a conformance credential: the user id, or `<user id>~admin` for that user with
 * the admin role (an admin sees every card). Null for none.
 */
export function conformanceClaims(token: string | null): Claims | null {
  if (!token) return null;
  const admin = token.endsWith(ADMIN_SUFFIX);
  const userID = admin ? token.slice(0, -ADMIN_SUFFIX.length) : token;
  if (!isUserID(userID)) return null;
  return admin ? { userID, role: "admin" } : { userID };
}

const ADMIN_SUFFIX = "~admin";

/** The tables of the suite's app. */
export const CONFORMANCE_SCHEMA: Schema = {
  tables: {
    todo: {
      columns: { id: "string", owner: "string", text: "string", done: "boolean", sort: "number" },
      primaryKey: ["id"],
    },
    item: {
      columns: {
        a: "string",
        b: "integer",
        v: { type: "json", nullable: true },
        data: { type: "bytes", nullable: true },
      },
      primaryKey: ["a", "b"],
    },
    /** Visible through typed columns compared with claims, which arrive as strings. */
    card: {
      columns: { id: "integer", uid: "integer", score: "number", flag: "boolean" },
      primaryKey: ["id"],
    },
  },
};

/** What the suite's upstream takes, and what weir's notify route takes from it. */
export const CONFORMANCE_UPSTREAM_TOKEN = "conformance-upstream-token";
export const CONFORMANCE_NOTIFY_TOKEN = "conformance-notify-token";
/** Small, so that a few upstream transactions make several versions and a snapshot several pages. */
export const CONFORMANCE_CHANGES_LIMIT = 40;
export const CONFORMANCE_PAGE_ROWS = 400;
/** The breaker's budget: rows ingested in a minute. */
export const CONFORMANCE_BREAKER_ROWS = 2_000;

/** Namespaces that replicate the suite's upstream: `up-*` (ingest) and `dp-*` (delegated push). */
export function isReplica(namespace: string): boolean {
  return namespace.startsWith("up-") || namespace.startsWith("dp-");
}

/** Small enough that the caps test pages through a few hundred rows. */
export const CONFORMANCE_MAX_CHANGE_ROWS = 50;
/** The host's `maxBodyBytes`: the largest body, and the largest Zero frame. */
export const CONFORMANCE_MAX_BODY_BYTES = 256 * 1024;

interface TodoArgs {
  id: string;
  text?: string;
  done?: boolean;
  sort?: number;
}

function ownTodo(tx: MutatorTx, id: string) {
  const todo = tx.get("todo", id);
  if (!todo) throw new MutatorError(`no todo ${id}`);
  if (todo.owner !== tx.claims.userID) throw new MutatorError("not your todo", { id });
  return todo;
}

/**
 * The app every host serves while the suite runs: todos owned by their creator (each user sees
 * their own), items with a composite key and every column type, and mutators that refuse.
 * `onEffect` sees what deferred effects did, where the host runs in the suite's process.
 */
export function conformanceConfig(
  options: {
    onEffect?(effect: { name: string; id: string }): void;
    /** The suite's upstream (see SuiteUpstream): namespaces named `up-*` and `dp-*` replicate it. */
    upstreamUrl?: string;
    /** The suite's app (see SuiteApp): namespaces named `dp-*` delegate their pushes to it. */
    appUrl?: string;
  } = {},
): Omit<WeirConfig, "authenticate"> {
  const { upstreamUrl, appUrl } = options;
  return {
    ...(appUrl === undefined
      ? {}
      : { mutate: { url: (namespace: string) => (namespace.startsWith("dp-") ? appUrl : null) } }),
    ...(upstreamUrl === undefined
      ? {}
      : {
          upstream: {
            source: (namespace: string) =>
              isReplica(namespace)
                ? httpUpstream({ url: `${upstreamUrl}/${namespace}`, token: CONFORMANCE_UPSTREAM_TOKEN })
                : null,
            notifyToken: CONFORMANCE_NOTIFY_TOKEN,
            pollMs: 100,
            changesLimit: CONFORMANCE_CHANGES_LIMIT,
            pageRows: CONFORMANCE_PAGE_ROWS,
            breaker: { rows: CONFORMANCE_BREAKER_ROWS, windowMs: 60_000 },
          },
        }),
    schema: CONFORMANCE_SCHEMA,
    mutators: {
      createTodo(tx, args: TodoArgs) {
        tx.insert("todo", {
          id: args.id,
          owner: tx.claims.userID,
          text: args.text ?? "",
          done: args.done ?? false,
          sort: args.sort ?? 0,
        });
        tx.defer(() => options.onEffect?.({ name: "createTodo", id: args.id }));
      },
      updateTodo(tx, args: TodoArgs) {
        ownTodo(tx, args.id);
        tx.update("todo", { id: args.id, text: args.text, done: args.done, sort: args.sort });
      },
      deleteTodo(tx, args: { id: string }) {
        ownTodo(tx, args.id);
        tx.delete("todo", args.id);
      },
      /** Writes through raw SQL with bound parameters (captured like any write). */
      createTodoSql(tx, args: TodoArgs) {
        tx.exec("INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, 0, ?)", [
          args.id,
          tx.claims.userID,
          args.text ?? "",
          args.sort ?? 0,
        ]);
      },
      /** Writes, then refuses: the write must roll back and the id still advance. */
      createThenRefuse(tx, args: TodoArgs) {
        tx.insert("todo", { id: args.id, owner: tx.claims.userID, text: "x", done: false, sort: 0 });
        tx.defer(() => options.onEffect?.({ name: "createThenRefuse", id: args.id }));
        throw new MutatorError("refused on purpose", { id: args.id });
      },
      /** Many rows in one mutation, for the caps. */
      bulkCreate(tx, args: { prefix: string; count: number }) {
        for (let i = 0; i < args.count; i++) {
          tx.insert("todo", {
            id: `${args.prefix}-${i}`,
            owner: tx.claims.userID,
            text: "",
            done: false,
            sort: i,
          });
        }
      },
      /** `b` may be a decimal string, for integers beyond 2^53 that JSON numbers cannot carry. */
      putItem(tx, args: { a: string; b: number | string; v?: unknown; data?: string | null }) {
        tx.upsert("item", { ...args, b: typeof args.b === "string" ? BigInt(args.b) : args.b });
      },
      deleteItem(tx, args: { a: string; b: number }) {
        tx.delete("item", { a: args.a, b: args.b });
      },
      /** Any owner, through raw SQL: a plain upsert, or REPLACE (which deletes the old row). */
      setTodo(tx, args: { id: string; owner: string; text?: string; how?: "upsert" | "replace" }) {
        const values = [args.id, args.owner, args.text ?? "", 0, 0];
        if (args.how === "replace") {
          tx.exec("INSERT OR REPLACE INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, ?, ?)", values);
        } else {
          tx.exec(
            "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, text = excluded.text",
            values,
          );
        }
      },
      /** Deletes any todo, or with `prefix` every todo whose id starts with it. */
      removeTodo(tx, args: { id?: string; prefix?: string }) {
        if (args.prefix !== undefined)
          tx.exec("DELETE FROM todo WHERE substr(id, 1, ?) = ?", [args.prefix.length, args.prefix]);
        else tx.exec("DELETE FROM todo WHERE id = ?", [args.id ?? ""]);
      },
      /** `count` todos `<prefix>-<i>` of `owner` in one mutation, written with REPLACE. */
      bulkReplace(tx, args: { prefix: string; count: number; owner: string }) {
        for (let i = 0; i < args.count; i++) {
          tx.exec("REPLACE INTO todo (id, owner, text, done, sort) VALUES (?, ?, '', 0, ?)", [
            `${args.prefix}-${i}`,
            args.owner,
            i,
          ]);
        }
      },
      putCard(
        tx,
        args: { id: number; uid: number; score: number; flag: boolean; how?: "upsert" | "replace" },
      ) {
        const { how, ...card } = args;
        if (how === "replace") {
          tx.exec("REPLACE INTO card (id, uid, score, flag) VALUES (?, ?, ?, ?)", [
            card.id,
            card.uid,
            card.score,
            card.flag ? 1 : 0,
          ]);
        } else tx.upsert("card", card);
      },
      /** Renumbers a card, replacing whatever card had the new id. */
      moveCard(tx, args: { from: number; to: number }) {
        tx.exec("UPDATE OR REPLACE card SET id = ? WHERE id = ?", [args.to, args.from]);
      },
      /**
       * Reads an item and writes a copy under another `a`: integers beyond 2^53 must survive. `b`
       * is given as a client pulled it (a decimal string beyond 2^53), and used as it came.
       */
      copyItem(tx, args: { a: string; b: number | string; to: string }) {
        const item = tx.get("item", { a: args.a, b: args.b });
        if (!item) throw new MutatorError(`no item ${args.a}/${args.b}`);
        tx.insert("item", { ...item, a: args.to });
      },
      /** A mistake an app can make: a mutator that returns a Promise. */
      returnsPromise() {
        return Promise.resolve() as unknown as undefined;
      },
    },
    visibility: (claims: Claims) => ({
      todo: { sql: "owner = ?", params: [claims.userID] },
      card: {
        sql: "uid = ? OR (flag = ? AND score = ?) OR ? = 'admin'",
        params: [
          claims.userID,
          "1",
          CONFORMANCE_CARD_SCORES[claims.userID] ?? "-1",
          claims.role === "admin" ? "admin" : "",
        ],
      },
    }),
    queries: {
      /** The caller's first `limit` todos by sort order (the owner comes from the claims). */
      firstTodos: (args, claims) => {
        const { limit } = args as { limit: number };
        if (!Number.isSafeInteger(limit)) throw new Error("limit must be an integer");
        return {
          table: "todo",
          where: {
            type: "simple",
            op: "=",
            left: { type: "column", name: "owner" },
            right: { type: "literal", value: claims.userID },
          },
          orderBy: [["sort", "asc"]],
          limit,
        };
      },
      /** Every card the caller may see. */
      cards: () => ({ table: "card" }),
      /** Every todo that is done. */
      doneTodos: () => ({
        table: "todo",
        where: {
          type: "simple",
          op: "=",
          left: { type: "column", name: "done" },
          right: { type: "literal", value: true },
        },
      }),
    },
    maxChangeRows: CONFORMANCE_MAX_CHANGE_ROWS,
    adminKey: CONFORMANCE_ADMIN_KEY,
    wakeWindowMs: 20,
    maxBodyBytes: CONFORMANCE_MAX_BODY_BYTES,
  };
}
