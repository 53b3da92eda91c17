import type * as v from "valibot";
import { ZeroConnectedBody } from "./connected.js";
import { ZeroDeleteClientsBody } from "./delete-clients.js";
import { ZeroErrorBody } from "./error.js";
import { ZeroPongBody } from "./ping.js";
import { ZeroPokeEndBody, ZeroPokePartBody, ZeroPokeStartBody } from "./poke.js";
import { ZeroPullResponseBody } from "./pull.js";
import { ZeroTransformErrorBody } from "./transform-error.js";

/** Each message weir sends a client (`[type, body]`), its body's schema by its type. */
export const ZERO_DOWNSTREAM_BODIES = {
  connected: ZeroConnectedBody,
  error: ZeroErrorBody,
  pong: ZeroPongBody,
  pokeStart: ZeroPokeStartBody,
  pokePart: ZeroPokePartBody,
  pokeEnd: ZeroPokeEndBody,
  pull: ZeroPullResponseBody,
  deleteClients: ZeroDeleteClientsBody,
  transformError: ZeroTransformErrorBody,
} as const;

type DownBodies = typeof ZERO_DOWNSTREAM_BODIES;
/** A message weir sends a client. */
export type ZeroDownstream = { [K in keyof DownBodies]: [K, v.InferOutput<DownBodies[K]>] }[keyof DownBodies];
