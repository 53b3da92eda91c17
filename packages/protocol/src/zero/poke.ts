import * as v from "valibot";
import { RowPatchOp } from "../pull-response.js";
import { ZeroMutationsPatchOp } from "./mutations-patch.js";
import { ZeroPokeQueryOp } from "./queries-patch.js";

/** `["pokeStart", body]`, down: a poke from the cookie the client is at (null: it has nothing). */
export const ZeroPokeStartBody = v.object({
  pokeID: v.string(),
  baseCookie: v.nullable(v.string()),
  timestamp: v.optional(v.number()),
});
export type ZeroPokeStartBody = v.InferOutput<typeof ZeroPokeStartBody>;

/** `["pokePart", body]`, down: one part of a poke's changes (a big poke spans several). */
export const ZeroPokePartBody = v.object({
  pokeID: v.string(),
  lastMutationIDChanges: v.optional(v.record(v.string(), v.number())),
  desiredQueriesPatches: v.optional(v.record(v.string(), v.array(ZeroPokeQueryOp))),
  gotQueriesPatch: v.optional(v.array(ZeroPokeQueryOp)),
  rowsPatch: v.optional(v.array(RowPatchOp)),
  mutationsPatch: v.optional(v.array(ZeroMutationsPatchOp)),
});
export type ZeroPokePartBody = v.InferOutput<typeof ZeroPokePartBody>;

/** `["pokeEnd", body]`, down: the poke is complete; the client is at `cookie`. */
export const ZeroPokeEndBody = v.object({ pokeID: v.string(), cookie: v.string() });
export type ZeroPokeEndBody = v.InferOutput<typeof ZeroPokeEndBody>;
