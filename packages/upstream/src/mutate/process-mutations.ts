import type { MutateAnswer, MutateRequest, MutateResponse } from "@weir/protocol";
import type { MutateLedger, MutationContext, MutationOutcome } from "./mutate-ledger.js";

/** Attempts of one mutation that lost a race (a deadlock, a serialization failure). */
const MAX_ATTEMPTS = 5;

/**
 * The app's side of delegated push over any store: each mutation in order, exactly once, through
 * the store's ledger. A mutation beyond the next one for its client (the app's store was restored
 * to before mutations weir already holds) refuses it and the rest of the push with
 * `PushFailed oooMutation`, which weir passes to the client as its own push would.
 */
export async function processMutations(
  ledger: MutateLedger,
  request: MutateRequest,
  context: { namespace: string; authorization: string | null },
): Promise<MutateAnswer> {
  const mutations: MutateResponse["mutations"] = [];
  let position: bigint | null = null;
  for (const [index, mutation] of request.mutations.entries()) {
    const mutationContext: MutationContext = {
      namespace: context.namespace,
      clientGroupID: request.clientGroupID,
      clientID: mutation.clientID,
      mutationID: mutation.id,
      authorization: context.authorization,
    };
    const last = index === request.mutations.length - 1;
    let outcome: MutationOutcome | undefined;
    for (let attempt = 1; outcome === undefined; attempt++) {
      try {
        outcome = await ledger.apply(mutation, mutationContext, last);
      } catch (error) {
        if (!ledger.retryable?.(error) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
    if (outcome.kind === "ooo") {
      return {
        pushResponse: {
          kind: "PushFailed",
          origin: "server",
          reason: "oooMutation",
          message: `mutation ${mutation.id} of client ${mutation.clientID} is not the next one this app expects`,
          mutationIDs: request.mutations.slice(index).map((m) => ({ clientID: m.clientID, id: m.id })),
        },
      };
    }
    mutations.push({ id: { clientID: mutation.clientID, id: mutation.id }, result: outcome.result });
    position = outcome.position ?? null;
  }
  return { mutations, watermark: await ledger.watermark(position) };
}

/** The mutator of `name`, never one the object inherits. */
export function mutatorNamed<M>(mutators: Readonly<Record<string, M>>, name: string): M | undefined {
  return Object.hasOwn(mutators, name) ? mutators[name] : undefined;
}
