// The server `pnpm bench fanout` measures: the todo example's own config (its schema, its
// mutators, visibility by owner), with one named query for the Zero clients (each user's own
// todos) and a request quota no run reaches.
import { todoConfig } from "../../examples/todo/src/todo-config.js";

export default {
  ...todoConfig,
  quotas: { requestUnits: 1_000_000_000 },
  queries: {
    myTodos: (_args: unknown, claims: { userID: string }) => ({
      table: "todo",
      where: {
        type: "simple",
        op: "=",
        left: { type: "column", name: "owner" },
        right: { type: "literal", value: claims.userID },
      },
      orderBy: [["sort", "asc"]],
    }),
  },
};
