import * as v from "valibot";

/** `["connected", body]`, down: the first message of a connection. */
export const ZeroConnectedBody = v.object({ wsid: v.string(), timestamp: v.optional(v.number()) });
export type ZeroConnectedBody = v.InferOutput<typeof ZeroConnectedBody>;
