import type { ZeroMutationID, ZeroMutationResult, ZeroPushBody, ZeroPushFailedBody } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { FlowResult } from "../flows/flow-context.js";
import type { RecordWith } from "../flows/push-answers.js";
import { HttpError } from "../http/http-error.js";
import { loneSurrogateMessage, loneSurrogatePath } from "../http/lone-surrogate.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroGroup } from "./zero-group.js";
import type { MutationResult } from "./zero-mutation-results.js";
import type { ZeroNamespace } from "./zero-namespace.js";

interface NativeEntry {
  id: { clientID: string; id: number };
  result: { error?: string; message?: string; details?: unknown };
}

/** A native push's PushFailed, or the app's own (a delegated push), as weir reads it. */
interface NativePushFailed {
  kind: "PushFailed";
  origin?: string;
  reason?: Extract<ZeroPushFailedBody, { origin: "server" }>["reason"];
  message?: string;
  mutationIDs?: ZeroMutationID[];
  details?: unknown;
}

/** A PushFailed's body, but for its kind and message. */
type PushFailedFields = ZeroPushFailedBody extends infer B
  ? B extends unknown
    ? Omit<B, "kind" | "message">
    : never
  : never;

/** How much of an app's refusal a PushFailed quotes (`bodyPreview`). */
const BODY_PREVIEW_CHARS = 512;

/**
 * A Zero push through weir's own push flow (or the delegated one): its mutations run as a native
 * batch, custom mutators by name with the first element of their args. A success reaches the
 * client as its id in the next poke's lastMutationIDChanges; an application error also as a
 * mutationsPatch entry in that poke (stored with the ids, and answered here for the hub to record). A CRUD mutation runs as the
 * mutator `_zero_crud`, which a config does not define, so it is refused as an application error.
 * An id beyond the next one refuses the push (PushFailed, oooMutation); the client reconnects and
 * pushes again. A delegated push that the app refused as a whole, or could not answer, is a
 * PushFailed too (see `delegatedPush`).
 */
export async function runZeroPush(
  ns: ZeroNamespace,
  group: ZeroGroup,
  body: ZeroPushBody,
  claims: Claims,
  authorization: string | null,
): Promise<MutationResult[]> {
  if (body.clientGroupID !== group.id) {
    throw new ZeroError("InvalidPush", "a push names the client group of its connection");
  }
  // Refused whole, as an HTTP push is: nothing of it runs. A PushFailed, not InvalidMessage, so
  // the stock client settles the mutations with the error and does not send them again on its
  // own at every reconnect.
  for (const [i, m] of body.mutations.entries()) {
    const at = loneSurrogatePath(m.args, `mutations[${i}].args`);
    if (at !== null) {
      throw pushFailed(loneSurrogateMessage(at), {
        origin: "zeroCache",
        reason: "parse",
        mutationIDs: mutationIDs(body),
      });
    }
  }
  const native = {
    clientGroupID: body.clientGroupID,
    pushVersion: body.pushVersion,
    mutations: body.mutations.map((m) => ({
      type: "custom" as const,
      id: m.id,
      clientID: m.clientID,
      name: m.name,
      args: m.args,
      timestamp: m.timestamp,
    })),
  };
  // The application errors are stored in the transaction that records their ids, so none is
  // lost to a crash between the two.
  const recordWith: RecordWith = (entries) => ns.zeroStore.addResults(group.id, appErrors(entries));
  const result: FlowResult = ns.delegates
    ? await delegatedPush(ns, body, native, claims, authorization, recordWith)
    : await ns.push("native", native, claims, recordWith);
  const answer = JSON.parse(result.response.body ?? "{}") as {
    pushResponse?: { mutations?: NativeEntry[] } | NativePushFailed;
  };
  const response = answer.pushResponse;
  if (response && "kind" in response && response.kind === "PushFailed") {
    if (response.reason !== undefined && response.reason !== "oooMutation") {
      // The app's own PushFailed (a delegated push): its reason goes to the client as it is.
      throw pushFailed(response.message ?? "the app refused the push", {
        origin: "server",
        reason: response.reason,
        mutationIDs: response.mutationIDs ?? mutationIDs(body),
        ...(response.details === undefined ? {} : { details: response.details }),
      });
    }
    throw new ZeroError("InvalidPush", response.message ?? "the push's mutations are out of order", {
      kind: "PushFailed",
      origin: "server",
      reason: "oooMutation",
      mutationIDs: response.mutationIDs ?? [],
    });
  }
  return appErrors(response && "mutations" in response ? (response.mutations ?? []) : []);
}

function appErrors(entries: readonly NativeEntry[]): MutationResult[] {
  return entries
    .filter((entry) => entry.result.error === "app")
    .map((entry) => ({
      clientID: entry.id.clientID,
      id: entry.id.id,
      result: entry.result as ZeroMutationResult,
    }));
}

/**
 * A push delegated to the app's mutate endpoint (the namespace's `mutate`): the app applies the
 * mutations, weir ingests what it wrote, and only then are the ids recorded, so the poke that
 * confirms a mutation carries its rows. What zero-cache sends when its API server fails, weir
 * sends for the same failures, as a PushFailed error that closes the connection (the stock client
 * then settles the push's mutations with that error and keeps them to push again once the app
 * reconnects it): an app that answered a 4xx is `reason: "http"` with its `status` (a 401 or 403
 * asks the client for a new credential); one that could not be reached, timed out, answered
 * something else, or whose writes did not come back through ingest is `reason: "internal"`, with
 * weir's error code leading the message (`app_unavailable: ...`). Nothing of such a push is
 * recorded.
 */
async function delegatedPush(
  ns: ZeroNamespace,
  body: ZeroPushBody,
  native: unknown,
  claims: Claims,
  authorization: string | null,
  recordWith: RecordWith,
): Promise<FlowResult> {
  let result: FlowResult;
  try {
    result = await ns.pushDelegated("native", native, claims, authorization, recordWith);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    throw pushFailed(`${error.code}: ${error.message}`, {
      origin: "zeroCache",
      reason: "internal",
      mutationIDs: mutationIDs(body),
    });
  }
  const status = result.response.status;
  if (status === 200) return result;
  const text = result.response.body ?? "";
  throw pushFailed(`the app's mutate endpoint answered ${status}`, {
    origin: "zeroCache",
    reason: "http",
    status,
    bodyPreview: text.slice(0, BODY_PREVIEW_CHARS),
    mutationIDs: mutationIDs(body),
  });
}

function pushFailed(message: string, body: PushFailedFields): ZeroError {
  return new ZeroError("PushFailed", message, { kind: "PushFailed", ...body });
}

function mutationIDs(body: ZeroPushBody): Array<{ clientID: string; id: number }> {
  return body.mutations.map((m) => ({ clientID: m.clientID, id: m.id }));
}
