import type { NodeHostOptions } from "@weir/node-host";
import { mutators } from "./mutators.js";
import { todoSchema } from "./schema.js";

/**
 * The todo app's server side: its schema, the shared mutators, and the rule that each user
 * sees only their own todos (the mutators set `owner` from the claims). Authentication is
 * node-host's development mode: the Authorization header (or `?auth=` on the wake socket) is
 * the user id, unverified.
 */
export const todoConfig = {
  schema: todoSchema,
  mutators,
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  devAuth: true,
} satisfies NodeHostOptions;
