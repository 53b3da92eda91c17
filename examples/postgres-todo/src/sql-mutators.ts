import { CreateTodoArgs, DeleteTodoArgs, UpdateTodoArgs } from "@weir/example-todo/todo-args";
import type { PostgresMutator, PushContext } from "@weir/postgres";
import * as v from "valibot";
import { userOf } from "./user-of.js";

/**
 * The todo mutators as the app server runs them: SQL against PostgreSQL, in the transaction the
 * push processor opens for each mutation (with the client's last mutation id). The browser runs
 * the todo example's mutators on its local copy with the same argument checks, so what it shows
 * at once is what the server writes. A throw refuses the mutation: its writes roll back, its id
 * is still recorded, and the client's queue moves on.
 */
export const sqlMutators: Record<string, PostgresMutator> = {
  async createTodo(tx, args, context) {
    const { id, text, done, sort } = parse(CreateTodoArgs, args);
    // The owner is the caller, never an argument: a user cannot write as another.
    const inserted = await tx.query(
      "INSERT INTO todo (id, owner, text, done, sort) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
      [id, caller(context), text, done, sort],
    );
    if (inserted.rowCount === 0) throw new Error(`todo ${id} already exists`);
  },

  async updateTodo(tx, args, context) {
    const { id, text, done } = parse(UpdateTodoArgs, args);
    // COALESCE keeps a column the arguments leave out; the owner check is in the WHERE.
    const updated = await tx.query(
      "UPDATE todo SET text = COALESCE($3, text), done = COALESCE($4, done) WHERE id = $1 AND owner = $2",
      [id, caller(context), text ?? null, done ?? null],
    );
    if (updated.rowCount === 0) throw new Error(`no todo ${id}`);
  },

  async deleteTodo(tx, args, context) {
    const { id } = parse(DeleteTodoArgs, args);
    // Deleting a missing todo (or another user's) does nothing, as in the browser.
    await tx.query("DELETE FROM todo WHERE id = $1 AND owner = $2", [id, caller(context)]);
  },
};

function caller(context: PushContext): string {
  const user = userOf(context.authorization);
  // The endpoint refuses callers without a user before any mutator runs.
  if (user === null) throw new Error("no user");
  return user;
}

function parse<S extends v.GenericSchema>(schema: S, args: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, args);
  if (result.success) return result.output;
  throw new Error(`invalid arguments: ${v.summarize(result.issues)}`);
}
