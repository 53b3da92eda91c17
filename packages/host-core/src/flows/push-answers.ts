import {
  type Dialect,
  ERROR_STATUS,
  type MutationResult,
  type PushBatch,
  type PushMutation,
  parsePushRequest,
} from "@weir/protocol";
import { HttpError } from "../http/http-error.js";
import { jsonParts } from "../http/http-parts.js";
import { isUnsupportedVersion } from "../http/refusal.js";
import type { RequestRecord } from "../http/request-record.js";
import type { FlowResult } from "./flow-context.js";
import type { Knobs } from "./knobs.js";

// What both push flows (mutators run here, or delegated to the app) answer alike.

export type Entry = { id: { clientID: string; id: number }; result: MutationResult };

/**
 * Called inside the transaction that records a push's ids, with the answers of the mutations
 * it records: what a dialect keeps of them (Zero's application errors) commits with the ids.
 */
export type RecordWith = (entries: readonly Entry[]) => void;

/** The batch, or the answer to a body of an unsupported version (in the dialect's own shape). */
export function parseBatch(dialect: Dialect, body: unknown): PushBatch | FlowResult {
  try {
    return parsePushRequest(body, dialect);
  } catch (error) {
    if (isUnsupportedVersion(error)) return unsupportedVersion(dialect, body, (error as Error).message);
    throw error;
  }
}

export function checkWriter(knobs: Readonly<Knobs>): void {
  if (!knobs.writerEnabled) {
    throw new HttpError("writer_disabled", "this namespace's writer is disabled; nothing was stored");
  }
}

/** The native answer to a batch stopped at its first out-of-order mutation. */
export function outOfOrder(batch: PushBatch, stoppedAt: number, log: Partial<RequestRecord>): FlowResult {
  const rest = batch.mutations.slice(stoppedAt);
  const first = rest[0]!;
  const pushResponse = {
    kind: "PushFailed",
    origin: "server",
    reason: "oooMutation",
    message: `mutation ${first.id} of client ${first.clientID} is out of order`,
    mutationIDs: rest.map((m) => ({ clientID: m.clientID, id: m.id })),
  };
  return { response: jsonParts({ pushResponse }), log: { ...log, error: "ooo" } };
}

export function entry(mutation: PushMutation, result: MutationResult): Entry {
  return { id: { clientID: mutation.clientID, id: mutation.id }, result };
}

export function alreadyProcessed(mutation: PushMutation, last: number): MutationResult {
  return {
    error: "alreadyProcessed",
    details: `mutation ${mutation.id} of client ${mutation.clientID} was already processed (last ${last})`,
  };
}

function unsupportedVersion(dialect: Dialect, body: unknown, message: string): FlowResult {
  if (dialect === "replicache") {
    return { response: jsonParts({ error: "VersionNotSupported", versionType: "push" }), log: {} };
  }
  // Both shapes: `{error, message}` for any HTTP client, `pushResponse` for a native one.
  const pushResponse = {
    kind: "PushFailed",
    origin: "server",
    reason: "unsupportedPushVersion",
    message,
    mutationIDs: mutationRefs(body),
  };
  return {
    response: jsonParts(
      { error: "unsupported_version", message, pushResponse },
      ERROR_STATUS.unsupported_version,
    ),
    log: { error: "unsupported_version" },
  };
}

/** The ids a body names, read defensively: it failed validation only on its version. */
function mutationRefs(body: unknown): { clientID: string; id: number }[] {
  const mutations = (body as { mutations?: unknown })?.mutations;
  if (!Array.isArray(mutations)) return [];
  return mutations.flatMap((m: { clientID?: unknown; id?: unknown }) =>
    typeof m?.clientID === "string" && typeof m.id === "number" ? [{ clientID: m.clientID, id: m.id }] : [],
  );
}
