import type * as v from "valibot";
import { ZeroAckMutationResponsesBody } from "./ack-mutation-responses.js";
import { ZeroChangeDesiredQueriesBody } from "./change-desired-queries.js";
import { ZeroCloseConnectionBody } from "./close-connection.js";
import { ZeroDeleteClientsBody } from "./delete-clients.js";
import { ZeroInitConnectionBody } from "./init-connection.js";
import { ZeroPingBody } from "./ping.js";
import { ZeroPullRequestBody } from "./pull.js";
import { ZeroPushBody } from "./push.js";
import { ZeroUpdateAuthBody } from "./update-auth.js";

/** Each message a client sends (`[type, body]`), its body's schema by its type. */
export const ZERO_UPSTREAM_BODIES = {
  initConnection: ZeroInitConnectionBody,
  changeDesiredQueries: ZeroChangeDesiredQueriesBody,
  push: ZeroPushBody,
  ping: ZeroPingBody,
  ackMutationResponses: ZeroAckMutationResponsesBody,
  deleteClients: ZeroDeleteClientsBody,
  updateAuth: ZeroUpdateAuthBody,
  pull: ZeroPullRequestBody,
  closeConnection: ZeroCloseConnectionBody,
} as const;

type UpBodies = typeof ZERO_UPSTREAM_BODIES;
/** A message from the client, as weir reads it. */
export type ZeroUpstream = { [K in keyof UpBodies]: [K, v.InferOutput<UpBodies[K]>] }[keyof UpBodies];
