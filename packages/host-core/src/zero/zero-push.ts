import type { Claims } from "../auth/claims.js";
import type { FlowResult } from "../flows/flow-context.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroGroup } from "./zero-group.js";
import type { ZeroPushBody } from "./zero-messages.js";
import type { ZeroNamespace } from "./zero-namespace.js";

interface NativeEntry {
  id: { clientID: string; id: number };
  result: { error?: string; message?: string; details?: unknown };
}

/**
 * A Zero push through weir's own push flow (or the delegated one): its mutations run as a native
 * batch, custom mutators by name with the first element of their args. A success reaches the
 * client as its id in the next poke's lastMutationIDChanges; an application error also as a
 * mutationsPatch entry in that poke (recorded on the group here). A CRUD mutation runs as the
 * mutator `_zero_crud`, which a config does not define, so it is refused as an application error.
 * An id beyond the next one refuses the push (PushFailed, oooMutation); the client reconnects and
 * pushes again.
 */
export async function runZeroPush(
  ns: ZeroNamespace,
  group: ZeroGroup,
  body: ZeroPushBody,
  claims: Claims,
  authorization: string | null,
): Promise<void> {
  if (body.clientGroupID !== group.id) {
    throw new ZeroError("InvalidPush", "a push names the client group of its connection");
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
  const result: FlowResult = ns.delegates
    ? await ns.pushDelegated("native", native, claims, authorization)
    : ns.push("native", native, claims);
  const answer = JSON.parse(result.response.body ?? "{}") as {
    pushResponse?: { mutations?: NativeEntry[]; kind?: string; mutationIDs?: unknown; message?: string };
  };
  const response = answer.pushResponse;
  if (response?.kind === "PushFailed") {
    throw new ZeroError("InvalidPush", response.message ?? "the push's mutations are out of order", {
      kind: "PushFailed",
      origin: "server",
      reason: "oooMutation",
      mutationIDs: response.mutationIDs ?? [],
    });
  }
  for (const entry of response?.mutations ?? []) {
    if (entry.result.error === "app") group.refused(entry.id.clientID, entry.id.id, entry.result);
  }
}
