import { mutators } from "@weir/example-todo/mutators";
import { todoSchema } from "@weir/example-todo/schema";
import type { WeirConfig } from "@weir/host-core";
import type { NodeHostOptions } from "@weir/node-host";
import { serverQueries } from "./server-queries.js";

/**
 * The server of the Zero todo app, on any host: the todo example's schema and mutators, the
 * named queries, and the rule that each user sees only their own todos. A host adds how it
 * authenticates.
 */
export const zeroTodoServer = {
  schema: todoSchema,
  mutators,
  queries: serverQueries,
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
} satisfies Omit<WeirConfig, "authenticate">;

/**
 * The Node host's config. Authentication is node-host's development mode: the client's `auth`
 * is the user id, unverified.
 */
export const zeroTodoConfig = { ...zeroTodoServer, devAuth: true } satisfies NodeHostOptions;
