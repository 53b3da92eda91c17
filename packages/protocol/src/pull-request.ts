import * as v from "valibot";
import { CookieInput, IdString } from "./fields.js";

/** `POST /<ns>/pull`: the native dialect's pull. */
export const PullRequest = v.strictObject({
  clientGroupID: IdString,
  clientID: IdString,
  cookie: CookieInput,
});
export type PullRequest = v.InferOutput<typeof PullRequest>;
