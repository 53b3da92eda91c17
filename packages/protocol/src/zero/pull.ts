import * as v from "valibot";
import { IdString } from "../fields.js";

/** `["pull", body]`, up: mutation recovery, which mutations of another client group were confirmed. */
export const ZeroPullRequestBody = v.object({
  clientGroupID: IdString,
  cookie: v.nullable(v.string()),
  requestID: v.string(),
});
export type ZeroPullRequestBody = v.InferOutput<typeof ZeroPullRequestBody>;

/** `["pull", body]`, down: that group's clients and the last mutation id confirmed of each. */
export const ZeroPullResponseBody = v.object({
  requestID: v.string(),
  cookie: v.string(),
  lastMutationIDChanges: v.record(v.string(), v.number()),
});
export type ZeroPullResponseBody = v.InferOutput<typeof ZeroPullResponseBody>;
