import * as v from "valibot";

/** The arguments of `todosByDone`, checked alike on the client and the server. */
export const DoneArgs = v.object({ done: v.boolean() });

/** The arguments of `firstTodos`: how many, at most 10,000. */
export const FirstArgs = v.object({
  limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)),
});

/**
 * The server's side of the named queries (`queries.ts`): name to AST, given the first element of
 * the client's args. Nothing of Zero's client here, so a Worker bundles it as it is.
 */
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
  firstTodos: (args: unknown) => {
    const { limit } = v.parse(FirstArgs, args);
    return { table: "todo", orderBy: [["sort", "asc"]], limit };
  },
};
