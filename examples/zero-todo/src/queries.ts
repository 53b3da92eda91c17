import { createBuilder, defineQueries, defineQuery } from "@rocicorp/zero";
import { schema } from "./schema.js";
import { DoneArgs, FirstArgs } from "./server-queries.js";

const zql = createBuilder(schema);

/**
 * The named queries. The client runs each on its local rows (Zero's query builder); the server
 * answers the same name with the AST weir evaluates (`server-queries.ts`), through the caller's
 * visibility (each user sees only their own todos), so both agree on what a query holds.
 */
export const queries = defineQueries({
  allTodos: defineQuery(() => zql.todo.orderBy("sort", "asc")),
  todosByDone: defineQuery(DoneArgs, ({ args }) => zql.todo.where("done", args.done).orderBy("sort", "asc")),
  /** The first `limit` todos in their order: a window. */
  firstTodos: defineQuery(FirstArgs, ({ args }) => zql.todo.orderBy("sort", "asc").limit(args.limit)),
});
