import type { Dialect, MutateRequest, MutationResult, PushMutation } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { DelegatedPushContext, FlowResult } from "../flows/flow-context.js";
import {
  alreadyProcessed,
  checkWriter,
  type Entry,
  entry,
  outOfOrder,
  parseBatch,
  type RecordWith,
} from "../flows/push-answers.js";
import { HttpError } from "../http/http-error.js";
import { jsonParts } from "../http/http-parts.js";
import { elapsedMs } from "../ports/clock.js";

/**
 * Push in a namespace whose writes belong to the app's own server. The namespace checks the push
 * (the group's owner, each mutation's order) and forwards the mutations that are next to the
 * app, never a replay. Once the app acknowledged every one, the namespace ingests what the app
 * wrote (passes that start after its answer, until the watermark it named), and only then records
 * the clients' last mutation ids, in a version after the ingested rows: a pull that shows a
 * mutation acknowledged shows its effects too. An answer that leaves a mutation unacknowledged,
 * or an ingest that cannot finish, records nothing: the client pushes again, and the app, which
 * keeps each client's last id with its writes, applies nothing twice.
 */
export async function runDelegatedPush(
  ctx: DelegatedPushContext,
  dialect: Dialect,
  body: unknown,
  claims: Claims,
  authorization: string | null,
  recordWith?: RecordWith,
): Promise<FlowResult> {
  const batch = parseBatch(dialect, body);
  if (!("clientGroupID" in batch)) return batch;
  const { engine, store, knobs, clock } = ctx;
  checkWriter(knobs);
  const started = clock.monotonic();
  const group = batch.clientGroupID;
  const owned = ctx.caughtUp.knowsOwner(group, claims.userID);
  const refs = (mutations: PushMutation[]) =>
    mutations.map((m) => ({ clientID: m.clientID, mutationID: m.id }));
  const preflights = store.transaction(() => {
    if (!owned) engine.claimGroup(store.db, group, claims.userID);
    return engine.preflightBatch(store.db, group, refs(batch.mutations));
  });
  ctx.caughtUp.rememberOwner(group, claims.userID);

  const entries: Entry[] = [];
  const forwarded: PushMutation[] = [];
  let stoppedAt = -1;
  let replays = 0;
  for (const [index, mutation] of batch.mutations.entries()) {
    const preflight = preflights[index]!;
    if (preflight.status === "replay") {
      replays++;
      entries.push(entry(mutation, alreadyProcessed(mutation, preflight.lastMutationID)));
    } else if (preflight.status === "ooo") {
      if (dialect === "replicache") continue;
      stoppedAt = index;
      break;
    } else forwarded.push(mutation);
  }

  let applied = 0;
  let appErrors = 0;
  if (forwarded.length > 0) {
    const request: MutateRequest = {
      clientGroupID: group,
      pushVersion: 1,
      mutations: forwarded.map((m) => ({
        type: "custom",
        id: m.id,
        clientID: m.clientID,
        name: m.name,
        args: [m.args],
        ...(m.timestamp === undefined ? {} : { timestamp: m.timestamp }),
      })),
    };
    const outcome = await ctx.forward(request, authorization);
    if (outcome.kind === "passThrough") {
      return { response: outcome.response, log: { mutations: batch.mutations.length, error: "app_refused" } };
    }
    const results = new Map<string, MutationResult>();
    for (const ack of outcome.answer.mutations)
      results.set(`${ack.id.clientID}\u0000${ack.id.id}`, ack.result);
    for (const mutation of forwarded) {
      if (!results.has(`${mutation.clientID}\u0000${mutation.id}`)) {
        throw new HttpError(
          "mutate_failed",
          `the app did not acknowledge mutation ${mutation.id} of client ${mutation.clientID}; nothing of this push was acknowledged`,
        );
      }
    }
    await ctx.ingestEffects(outcome.answer.watermark);
    // The ids, one version after the effects. A push of the same client that went first
    // (a retry racing this one) recorded some already.
    const recorded = store.transaction(() => {
      const again = engine.preflightBatch(store.db, group, refs(forwarded));
      const next = forwarded.filter((_, index) => again[index]!.status === "apply");
      if (next.length > 0) engine.finalizeBatch(store.db, group, refs(next));
      recordWith?.(next.map((m) => entry(m, results.get(`${m.clientID}\u0000${m.id}`)!)));
      return next.length;
    });
    for (const mutation of forwarded) {
      const result = results.get(`${mutation.clientID}\u0000${mutation.id}`)!;
      if ("error" in result) appErrors++;
      else applied++;
      entries.push(entry(mutation, result));
    }
    if (recorded > 0) {
      ctx.committed(new Set(forwarded.map((m) => m.clientID)), { user: claims.userID });
      ctx.retention(1);
    }
  }

  const counters = ctx.counters;
  counters.pushes++;
  counters.mutations += applied;
  counters.appErrors += appErrors;
  counters.replays += replays;
  const log = {
    mutations: batch.mutations.length,
    idsAdvanced: applied + appErrors,
    appErrors,
    txMs: elapsedMs(clock, started),
  };
  if (dialect === "replicache") return { response: jsonParts({}), log };
  if (stoppedAt >= 0) return outOfOrder(batch, stoppedAt, log);
  return { response: jsonParts({ pushResponse: { mutations: entries } }), log };
}
