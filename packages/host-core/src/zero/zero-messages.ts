import {
  IdString,
  JsonValue,
  MAX_MUTATIONS_PER_PUSH,
  MAX_QUERY_PATCH_OPS,
  MutationId,
  MutatorName,
} from "@weir/protocol";
import * as v from "valibot";
import { ZeroError } from "./zero-error.js";

/**
 * The messages a stock Zero client sends (sync protocol v51), as weir reads them. Objects are not
 * strict: a client may add fields weir has no use for (tracing headers, URLs of a zero-cache's
 * own push and query endpoints).
 */

/** A change to a client's desired queries. A put names a query the server defines. */
export const ZeroQueryOp = v.variant("op", [
  v.object({
    op: v.literal("put"),
    hash: IdString,
    ttl: v.optional(v.number()),
    name: v.optional(MutatorName),
    args: v.optional(v.array(JsonValue)),
    ast: v.optional(v.unknown()),
  }),
  v.object({ op: v.literal("del"), hash: IdString }),
  v.object({ op: v.literal("clear") }),
]);
export type ZeroQueryOp = v.InferOutput<typeof ZeroQueryOp>;

const QueriesPatch = v.pipe(v.array(ZeroQueryOp), v.maxLength(MAX_QUERY_PATCH_OPS));

export const InitConnectionBody = v.object({
  desiredQueriesPatch: QueriesPatch,
  activeClients: v.optional(v.array(IdString)),
});

const ZeroMutation = v.object({
  type: v.picklist(["custom", "crud"]),
  id: MutationId,
  clientID: IdString,
  name: MutatorName,
  args: v.array(JsonValue),
  timestamp: v.number(),
});

export const ZeroPushBody = v.object({
  clientGroupID: IdString,
  mutations: v.pipe(v.array(ZeroMutation), v.maxLength(MAX_MUTATIONS_PER_PUSH)),
  pushVersion: v.number(),
  timestamp: v.number(),
  requestID: v.string(),
});
export type ZeroPushBody = v.InferOutput<typeof ZeroPushBody>;

const MutationRef = v.object({ id: MutationId, clientID: IdString });

/** Each upstream message's body, by its type. */
const BODIES = {
  initConnection: InitConnectionBody,
  changeDesiredQueries: v.object({ desiredQueriesPatch: QueriesPatch }),
  push: ZeroPushBody,
  ping: v.object({}),
  ackMutationResponses: MutationRef,
  deleteClients: v.object({
    clientIDs: v.optional(v.array(IdString)),
    clientGroupIDs: v.optional(v.array(IdString)),
  }),
  updateAuth: v.object({ auth: v.string() }),
  pull: v.object({ clientGroupID: IdString, cookie: v.nullable(v.string()), requestID: v.string() }),
  closeConnection: v.array(v.unknown()),
} as const;

type Bodies = typeof BODIES;
export type ZeroUpstream = { [K in keyof Bodies]: [K, v.InferOutput<Bodies[K]>] }[keyof Bodies];

/** A frame of the socket as a message, or the InvalidMessage error that answers it. */
export function parseZeroMessage(frame: string): ZeroUpstream {
  let json: unknown;
  try {
    json = JSON.parse(frame);
  } catch {
    throw new ZeroError("InvalidMessage", "a message is a JSON array [type, body]");
  }
  if (!Array.isArray(json) || json.length !== 2 || typeof json[0] !== "string") {
    throw new ZeroError("InvalidMessage", "a message is a JSON array [type, body]");
  }
  const type = json[0];
  if (!Object.hasOwn(BODIES, type)) {
    throw new ZeroError("InvalidMessage", `unknown message type ${JSON.stringify(type.slice(0, 64))}`);
  }
  const result = v.safeParse(BODIES[type as keyof Bodies], json[1]);
  if (!result.success) {
    throw new ZeroError("InvalidMessage", `${type}: ${v.summarize(result.issues).slice(0, 500)}`);
  }
  return [type, result.output] as ZeroUpstream;
}
