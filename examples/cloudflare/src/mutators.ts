import { MutatorError, type MutatorTx } from "@weir/edge-host";
import * as v from "valibot";

// The same mutators and argument checks as the Node todo example, so either server serves its
// browser app unchanged.
const id = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const text = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(500));
const CreateTodoArgs = v.strictObject({ id, text, done: v.boolean(), sort: v.pipe(v.number(), v.finite()) });
const UpdateTodoArgs = v.strictObject({ id, text: v.optional(text), done: v.optional(v.boolean()) });
const DeleteTodoArgs = v.strictObject({ id });

function parse<S extends v.GenericSchema>(schema: S, args: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, args);
  if (result.success) return result.output;
  throw new MutatorError(`invalid arguments: ${v.summarize(result.issues)}`);
}

export const mutators = {
  createTodo(tx: MutatorTx, args: unknown): void {
    const { id, text, done, sort } = parse(CreateTodoArgs, args);
    if (tx.get("todo", id)) throw new MutatorError(`todo ${id} already exists`);
    // The owner comes from the claims, never from the arguments.
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
    if (todo && todo.owner === tx.claims.userID) tx.delete("todo", id);
  },
};
