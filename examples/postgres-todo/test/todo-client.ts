import type { Todo } from "@weir/example-todo/schema";
import type { TodoClient } from "@weir/example-todo/test/todo-client";

// The todo example's stock Replicache client and its sync loop, used here against weir with
// PostgreSQL behind it.
export { sync, type TodoClient, todoClient } from "@weir/example-todo/test/todo-client";

/** The client's todos, by `sort` then id. */
export async function todosOf(rep: TodoClient): Promise<Todo[]> {
  const rows = (await rep.query((tx) =>
    tx.scan({ prefix: "todo/" }).values().toArray(),
  )) as unknown as Todo[];
  return sortById(rows);
}

export function sortById(todos: readonly Todo[]): Todo[] {
  return [...todos].sort((a, b) => a.sort - b.sort || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
