import type { Dialect } from "./dialect.js";
import { MAX_ID_LENGTH, MAX_MUTATIONS_PER_PUSH, MAX_MUTATOR_NAME_LENGTH } from "./limits.js";
import { parse } from "./parse.js";
import type { PushBatch } from "./push-batch.js";
import { PushRequest, SUPPORTED_PUSH_VERSION } from "./push-request.js";
import { ReplicachePushRequest } from "./replicache-push-request.js";
import { UnsupportedVersionError, WireError } from "./wire-error.js";

/**
 * Validates a push body of either dialect and brings it to one shape. A batch past the protocol's
 * cap is refused as too large (`payload_too_large`) before any of it is validated, so the client
 * knows to split it rather than fix it.
 */
export function parsePushRequest(body: unknown, dialect: Dialect): PushBatch {
  const count = mutationCount(body);
  if (count > MAX_MUTATIONS_PER_PUSH) {
    throw new WireError(
      "payload_too_large",
      `a push holds at most ${MAX_MUTATIONS_PER_PUSH} mutations (this one has ${count}); send the rest in another push`,
    );
  }
  const fast = dialect === "replicache" ? plainReplicachePush(body) : plainNativePush(body);
  if (fast) {
    if (fast.pushVersion !== SUPPORTED_PUSH_VERSION) throw new UnsupportedVersionError("push");
    return fast.batch;
  }
  const result = dialect === "replicache" ? parse(ReplicachePushRequest, body) : parse(PushRequest, body);
  if (!result.ok) throw new WireError("bad_request", result.message);
  if (result.value.pushVersion !== SUPPORTED_PUSH_VERSION) throw new UnsupportedVersionError("push");
  return {
    clientGroupID: result.value.clientGroupID,
    mutations: result.value.mutations.map(({ clientID, id, name, args, timestamp }) => ({
      clientID,
      id,
      name,
      // A native mutation carries its argument as the one element of `args`.
      args: dialect === "replicache" ? args : (args as unknown[])[0],
      timestamp,
    })),
  };
}

function mutationCount(body: unknown): number {
  const mutations = (body as { mutations?: unknown } | null)?.mutations;
  return Array.isArray(mutations) ? mutations.length : 0;
}

/*
 * The schemas above decide, and say what is wrong with a body. Every push is checked, though,
 * and running them costs a busy server a share of its time; so a body that plainly passes them
 * (each field of the type and within the bounds they ask) is taken as it is, by the checks
 * below. These only ever say yes where the schemas would, with the same batch; anything else
 * (a wrong type, an unknown field, a bound exceeded) goes through the schemas for its answer.
 */

interface PlainPush {
  pushVersion: number;
  batch: PushBatch;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === "number" && !Number.isNaN(value);
const isBounded = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length >= 1 && value.length <= max;
const isMutationID = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 1;

function plainReplicachePush(body: unknown): PlainPush | null {
  if (!isRecord(body)) return null;
  const { pushVersion, clientGroupID, profileID, schemaVersion, mutations } = body;
  if (!isNumber(pushVersion) || !isBounded(clientGroupID, MAX_ID_LENGTH)) return null;
  if (profileID !== undefined && typeof profileID !== "string") return null;
  if (schemaVersion !== undefined && typeof schemaVersion !== "string") return null;
  if (!Array.isArray(mutations) || mutations.length > MAX_MUTATIONS_PER_PUSH) return null;
  const batch: PushBatch = { clientGroupID, mutations: [] };
  for (const mutation of mutations) {
    if (!isRecord(mutation)) return null;
    const { clientID, id, name, args, timestamp } = mutation;
    if (!isBounded(clientID, MAX_ID_LENGTH) || !isMutationID(id)) return null;
    if (!isBounded(name, MAX_MUTATOR_NAME_LENGTH) || !isNumber(timestamp)) return null;
    // Any value, but the field must be there.
    if (!("args" in mutation)) return null;
    batch.mutations.push({ clientID, id, name, args, timestamp });
  }
  return { pushVersion, batch };
}

const NATIVE_PUSH_KEYS = new Set(["clientGroupID", "pushVersion", "mutations"]);
const NATIVE_MUTATION_KEYS = new Set(["type", "id", "clientID", "name", "args", "timestamp"]);

function onlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

function plainNativePush(body: unknown): PlainPush | null {
  if (!isRecord(body) || !onlyKeys(body, NATIVE_PUSH_KEYS)) return null;
  const { pushVersion, clientGroupID, mutations } = body;
  if (!isNumber(pushVersion) || !isBounded(clientGroupID, MAX_ID_LENGTH)) return null;
  if (!Array.isArray(mutations) || mutations.length > MAX_MUTATIONS_PER_PUSH) return null;
  const batch: PushBatch = { clientGroupID, mutations: [] };
  for (const mutation of mutations) {
    if (!isRecord(mutation) || !onlyKeys(mutation, NATIVE_MUTATION_KEYS)) return null;
    const { type, clientID, id, name, args, timestamp } = mutation;
    if (type !== "custom" || !isBounded(clientID, MAX_ID_LENGTH) || !isMutationID(id)) return null;
    if (!isBounded(name, MAX_MUTATOR_NAME_LENGTH) || !Array.isArray(args)) return null;
    if (timestamp !== undefined && !isNumber(timestamp)) return null;
    batch.mutations.push({ clientID, id, name, args: args[0], timestamp });
  }
  return { pushVersion, batch };
}
