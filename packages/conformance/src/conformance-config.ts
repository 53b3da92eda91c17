import { type Claims, MutatorError, type MutatorTx, type WeirConfig } from "@weir/host-core";

export const CONFORMANCE_ADMIN_KEY = "conformance-admin-key";
/** Small enough that the caps test pages through a few hundred rows. */
export const CONFORMANCE_MAX_CHANGE_ROWS = 50;

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
  options: { onEffect?(effect: { name: string; id: string }): void } = {},
): Omit<WeirConfig, "authenticate"> {
  return {
    schema: {
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
      },
    },
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
      putItem(tx, args: { a: string; b: number; v?: unknown; data?: string | null }) {
        tx.upsert("item", args);
      },
      deleteItem(tx, args: { a: string; b: number }) {
        tx.delete("item", { a: args.a, b: args.b });
      },
      /** A mistake an app can make: a mutator that returns a Promise. */
      returnsPromise() {
        return Promise.resolve() as unknown as undefined;
      },
    },
    visibility: (claims: Claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
    maxChangeRows: CONFORMANCE_MAX_CHANGE_ROWS,
    adminKey: CONFORMANCE_ADMIN_KEY,
    wakeWindowMs: 20,
    maxBodyBytes: 256 * 1024,
  };
}
