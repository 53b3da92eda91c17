import * as v from "valibot";

/** `["updateAuth", body]`, up: a new credential of the same user. */
export const ZeroUpdateAuthBody = v.object({ auth: v.string() });
export type ZeroUpdateAuthBody = v.InferOutput<typeof ZeroUpdateAuthBody>;
