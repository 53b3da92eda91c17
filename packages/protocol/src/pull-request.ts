import * as v from "valibot";
import { CookieInput, IdString, JsonValue, MutatorName } from "./fields.js";
import { MAX_QUERY_PATCH_OPS } from "./limits.js";

/**
 * A change to a client group's active queries. A put names a query the server defines and its
 * args; the server resolves it to an AST. A client never sends an AST.
 */
export const QueryPatchOperation = v.variant("op", [
  v.strictObject({
    op: v.literal("put"),
    hash: IdString,
    name: MutatorName,
    args: v.optional(JsonValue),
    ast: v.optional(v.never("clients send a query's name and args: raw query ASTs are refused")),
  }),
  v.strictObject({ op: v.literal("del"), hash: IdString }),
  v.strictObject({ op: v.literal("clear") }),
]);
export type QueryPatchOperation = v.InferOutput<typeof QueryPatchOperation>;

/** `POST /<ns>/pull`: the native dialect's pull, with the group's query patch when it pulls by queries. */
export const PullRequest = v.strictObject({
  clientGroupID: IdString,
  clientID: IdString,
  cookie: CookieInput,
  queries: v.optional(
    v.strictObject({ patch: v.pipe(v.array(QueryPatchOperation), v.maxLength(MAX_QUERY_PATCH_OPS)) }),
  ),
});
export type PullRequest = v.InferOutput<typeof PullRequest>;
