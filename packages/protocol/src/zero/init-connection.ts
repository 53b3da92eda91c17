import * as v from "valibot";
import { IdString } from "../fields.js";
import { ZeroQueriesPatch } from "./queries-patch.js";

/**
 * `["initConnection", body]`, up: the client's desired queries, in the protocol header or as its
 * first message. Not strict, as no Zero message is: a client may add fields weir has no use for
 * (its client schema, the URLs of a zero-cache's own push and query endpoints).
 */
export const ZeroInitConnectionBody = v.object({
  desiredQueriesPatch: ZeroQueriesPatch,
  activeClients: v.optional(v.array(IdString)),
});
export type ZeroInitConnectionBody = v.InferOutput<typeof ZeroInitConnectionBody>;
