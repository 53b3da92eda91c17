import * as v from "valibot";

/** `["closeConnection", []]`, up: the client closes its connection. */
export const ZeroCloseConnectionBody = v.array(v.unknown());
export type ZeroCloseConnectionBody = v.InferOutput<typeof ZeroCloseConnectionBody>;
