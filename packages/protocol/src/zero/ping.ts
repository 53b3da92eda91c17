import * as v from "valibot";

/** `["ping", {}]`, up: answered `["pong", {}]`. */
export const ZeroPingBody = v.object({});
export type ZeroPingBody = v.InferOutput<typeof ZeroPingBody>;

/** `["pong", {}]`, down: the answer to a ping. */
export const ZeroPongBody = v.object({});
export type ZeroPongBody = v.InferOutput<typeof ZeroPongBody>;
