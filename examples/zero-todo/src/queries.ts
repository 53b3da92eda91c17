import { createBuilder, defineQueries, defineQuery } from "@rocicorp/zero";
import * as v from "valibot";
import { schema } from "./schema.js";

const zql = createBuilder(schema);

const DoneArgs = v.object({ done: v.boolean() });

/**
 * The named queries. The client runs each on its local rows (Zero's query builder); the server
 * answers the same name with the AST weir evaluates, through the caller's visibility (each user
 * sees only their own todos), so both agree on what a query holds.
 */
export const queries = defineQueries({
  allTodos: defineQuery(() => zql.todo.orderBy("sort", "asc")),
  todosByDone: defineQuery(DoneArgs, ({ args }) => zql.todo.where("done", args.done).orderBy("sort", "asc")),
});

/** The server's side of the same queries: name to AST, given the first element of the client's args. */
export const serverQueries = {
  allTodos: () => ({ table: "todo", orderBy: [["sort", "asc"]] }),
  todosByDone: (args: unknown) => {
    const { done } = v.parse(DoneArgs, args);
    return {
      table: "todo",
      where: {
        type: "simple",
        op: "=",
        left: { type: "column", name: "done" },
        right: { type: "literal", value: done },
      },
      orderBy: [["sort", "asc"]],
    };
  },
};
