import * as v from "valibot";
import { CookieInput, IdString, JsonValue } from "./fields.js";

/**
 * `POST /<ns>/replicache/pull`: Replicache's pull v1. Unknown fields are kept out but not refused,
 * so that newer clients that add fields still sync.
 */
export const ReplicachePullRequest = v.object({
  pullVersion: v.number(),
  clientGroupID: IdString,
  cookie: CookieInput,
  profileID: v.optional(v.string()),
  schemaVersion: v.optional(v.string()),
  extra: v.optional(JsonValue),
});
export type ReplicachePullRequest = v.InferOutput<typeof ReplicachePullRequest>;

export const SUPPORTED_PULL_VERSION = 1;
