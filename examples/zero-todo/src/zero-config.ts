import { mutators } from "@weir/example-todo/mutators";
import { todoSchema } from "@weir/example-todo/schema";
import type { NodeHostOptions } from "@weir/node-host";
import { serverQueries } from "./queries.js";

/**
 * The server of the Zero todo app: the todo example's schema and mutators, the named queries,
 * and the rule that each user sees only their own todos. Authentication is node-host's
 * development mode: the client's `auth` is the user id, unverified.
 */
export const zeroTodoConfig = {
  schema: todoSchema,
  mutators,
  queries: serverQueries,
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  devAuth: true,
} satisfies NodeHostOptions;
