import { MutatorError, type MutatorTx } from "@weir/host-core";
import * as v from "valibot";
import { CreateTodoArgs, DeleteTodoArgs, UpdateTodoArgs } from "./todo-args.js";

/**
 * The todo mutators. The server runs them inside its SQLite transaction with the caller's
 * claims; the browser runs the very same functions against its local Replicache copy, so the
 * screen changes at once and the server's answer agrees with it.
 *
 * A refusal throws `MutatorError`: the server rolls the mutation back and records the error
 * (the client's mutation id still advances), and the browser's `rep.mutate` call rejects.
 */
export const mutators = {
  createTodo(tx: MutatorTx, args: unknown): void {
    const { id, text, done, sort } = parse(CreateTodoArgs, args);
    if (tx.get("todo", id)) throw new MutatorError(`todo ${id} already exists`);
    // The owner comes from the claims, never from the arguments: a user cannot write as another.
    tx.insert("todo", { id, owner: tx.claims.userID, text, done, sort });
  },

  updateTodo(tx: MutatorTx, args: unknown): void {
    const { id, text, done } = parse(UpdateTodoArgs, args);
    const todo = tx.get("todo", id);
    if (!todo || todo.owner !== tx.claims.userID) throw new MutatorError(`no todo ${id}`);
    tx.update("todo", {
      id,
      ...(text === undefined ? {} : { text }),
      ...(done === undefined ? {} : { done }),
    });
  },

  deleteTodo(tx: MutatorTx, args: unknown): void {
    const { id } = parse(DeleteTodoArgs, args);
    const todo = tx.get("todo", id);
    // Deleting twice (two windows at once) is not an error; another user's todo stays put.
    if (todo && todo.owner === tx.claims.userID) tx.delete("todo", id);
  },
};

function parse<S extends v.GenericSchema>(schema: S, args: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, args);
  if (result.success) return result.output;
  throw new MutatorError(`invalid arguments: ${v.summarize(result.issues)}`);
}
