import type { NodeHostOptions } from "@weir/node-host";
import { mutators } from "./mutators.js";
import { todoSchema } from "./schema.js";
import { devAuthenticate } from "./server/dev-auth.js";

/**
 * The todo app's server side: its schema, the shared mutators, and the rule that each user
 * sees only their own todos (the mutators set `owner` from the claims).
 */
export const todoConfig = {
  schema: todoSchema,
  mutators,
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  authenticate: devAuthenticate,
} satisfies NodeHostOptions;
