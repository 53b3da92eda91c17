import * as v from "valibot";
import { ZeroQueriesPatch } from "./queries-patch.js";

/** `["changeDesiredQueries", body]`, up: a change to the client's desired queries. */
export const ZeroChangeDesiredQueriesBody = v.object({ desiredQueriesPatch: ZeroQueriesPatch });
export type ZeroChangeDesiredQueriesBody = v.InferOutput<typeof ZeroChangeDesiredQueriesBody>;
