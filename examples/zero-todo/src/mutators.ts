import { defineMutator, defineMutators, type Transaction } from "@rocicorp/zero";
import type { CreateTodoArgs, DeleteTodoArgs, UpdateTodoArgs } from "@weir/example-todo/todo-args";
import type { Schema, TodoContext } from "./schema.js";

/**
 * The client's optimistic side of the todo mutators: the server runs the todo example's own
 * mutators (`@weir/example-todo/mutators`) under the same names, with the same args, and its
 * answer wins (a refusal there rolls the client's change back).
 */
export type { TodoContext };

export const mutators = defineMutators({
  createTodo: defineMutator(
    async ({ tx, args, ctx }: { tx: Transaction<Schema>; args: CreateTodoArgs; ctx: TodoContext }) => {
      await tx.mutate.todo.insert({ ...args, owner: ctx.userID });
    },
  ),
  updateTodo: defineMutator(async ({ tx, args }: { tx: Transaction<Schema>; args: UpdateTodoArgs }) => {
    await tx.mutate.todo.update(args);
  }),
  deleteTodo: defineMutator(async ({ tx, args }: { tx: Transaction<Schema>; args: DeleteTodoArgs }) => {
    await tx.mutate.todo.delete(args);
  }),
});
