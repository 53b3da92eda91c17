import type { Dialect, PushBatch } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { jsonParts } from "../http/http-parts.js";
import type { MutatorContext } from "../mutators/mutator.js";
import { runMutator } from "../mutators/run-mutator.js";
import { elapsedMs } from "../ports/clock.js";
import { fireFault } from "./fault.js";
import type { FlowResult, PushContext } from "./flow-context.js";
import {
  alreadyProcessed,
  checkWriter,
  type Entry,
  entry,
  outOfOrder,
  parseBatch,
  type RecordWith,
} from "./push-answers.js";

/**
 * Push in either dialect. The batch runs in one transaction and commits as one version; an
 * application error rolls back only that mutation's writes (see runBatch) while its id still
 * advances with the rest. Nothing is acknowledged before the commit, and deferred effects run
 * only after it.
 */
export function runPush(
  ctx: PushContext,
  dialect: Dialect,
  body: unknown,
  claims: Claims,
  recordWith?: RecordWith,
): FlowResult {
  const batch = parseBatch(dialect, body);
  if (!("clientGroupID" in batch)) return batch;
  const { knobs, clock } = ctx;
  checkWriter(knobs);

  const started = clock.monotonic();
  // A group whose owner a committed pull or push showed needs no look in the database.
  const owned = ctx.caughtUp.knowsOwner(batch.clientGroupID, claims.userID);
  // Mutators run side by side in the batch's transaction; only when one refuses is the batch
  // rolled back and run again with each mutation in a nested transaction of its own, so that
  // the refused one's writes alone are undone. Refusals are rare, and savepoints cost.
  const outcome =
    runBatch(ctx, dialect, batch, claims, owned, false, recordWith) ??
    (runBatch(ctx, dialect, batch, claims, owned, true, recordWith) as BatchOutcome);
  const { entries, writers, deferred, stoppedAt, applied, appErrors, replays } = outcome;
  const txMs = elapsedMs(clock, started);
  ctx.caughtUp.rememberOwner(batch.clientGroupID, claims.userID);

  const counters = ctx.counters;
  counters.pushes++;
  counters.mutations += applied;
  counters.appErrors += appErrors;
  counters.replays += replays;
  if (applied > 0) {
    ctx.runDeferred(deferred);
    ctx.committed(writers, { user: claims.userID });
  }
  if (applied + appErrors > 0) ctx.retention(applied + appErrors);
  fireFault(knobs, "push_after_commit_before_response");

  const log = { mutations: batch.mutations.length, idsAdvanced: applied + appErrors, appErrors, txMs };
  if (knobs.dropNextPushResponse) {
    ctx.setKnob("dropNextPushResponse", false);
    return { response: { ...jsonParts({}), drop: true }, log: { ...log, error: "response_dropped" } };
  }
  if (dialect === "replicache") return { response: jsonParts({}), log };
  if (stoppedAt >= 0) return outOfOrder(batch, stoppedAt, log);
  return { response: jsonParts({ pushResponse: { mutations: entries } }), log };
}

interface BatchOutcome {
  entries: Entry[];
  writers: Set<string>;
  deferred: Array<() => void | Promise<void>>;
  /** The index of the native batch's first out-of-order mutation, or -1. */
  stoppedAt: number;
  applied: number;
  appErrors: number;
  replays: number;
}

/** Thrown through the batch's transaction to roll it back when a mutator refused. */
const REFUSED = Symbol("a mutator refused");

/**
 * The batch in one transaction. Not `isolated`, a mutator's refusal rolls everything back and
 * answers null; `isolated`, each mutator runs in a nested transaction and a refusal becomes its
 * application error.
 */
function runBatch(
  ctx: PushContext,
  dialect: Dialect,
  batch: PushBatch,
  claims: Claims,
  owned: boolean,
  isolated: boolean,
  recordWith?: RecordWith,
): BatchOutcome | null {
  const { engine, store, knobs } = ctx;
  const outcome: BatchOutcome = {
    entries: [],
    writers: new Set(),
    deferred: [],
    stoppedAt: -1,
    applied: 0,
    appErrors: 0,
    replays: 0,
  };
  try {
    store.transaction(() => {
      if (!owned) engine.claimGroup(store.db, batch.clientGroupID, claims.userID);
      // One preflight and one finalize for the whole batch: the mutations share one version.
      const preflights = engine.preflightBatch(
        store.db,
        batch.clientGroupID,
        batch.mutations.map((m) => ({ clientID: m.clientID, mutationID: m.id })),
      );
      const processed: { clientID: string; mutationID: number }[] = [];
      for (const [index, mutation] of batch.mutations.entries()) {
        fireFault(knobs, "push_before_mutation");
        const preflight = preflights[index]!;
        if (preflight.status === "replay") {
          outcome.replays++;
          outcome.entries.push(entry(mutation, alreadyProcessed(mutation, preflight.lastMutationID)));
          continue;
        }
        if (preflight.status === "ooo") {
          // Replicache's server guide ignores a mutation from the future; the native dialect stops.
          if (dialect === "replicache") continue;
          outcome.stoppedAt = index;
          break;
        }
        const mutatorCtx: MutatorContext = {
          namespace: ctx.namespace,
          claims,
          clientGroupID: batch.clientGroupID,
          clientID: mutation.clientID,
          mutationID: mutation.id,
        };
        if (mutation.timestamp !== undefined) mutatorCtx.timestamp = mutation.timestamp;
        const result = runMutator(ctx, mutation.name, mutation.args, mutatorCtx, isolated);
        processed.push({ clientID: mutation.clientID, mutationID: mutation.id });
        if (result.ok) {
          outcome.applied++;
          outcome.writers.add(mutation.clientID);
          if (result.deferred.length > 0) outcome.deferred.push(...result.deferred);
          outcome.entries.push(entry(mutation, {}));
        } else {
          if (result.wrote) throw REFUSED;
          outcome.appErrors++;
          outcome.entries.push(entry(mutation, result.error));
        }
      }
      engine.finalizeBatch(store.db, batch.clientGroupID, processed);
      recordWith?.(
        outcome.entries.filter((e) => !("error" in e.result) || e.result.error !== "alreadyProcessed"),
      );
      fireFault(knobs, "push_after_write_before_commit");
    });
  } catch (error) {
    if (error === REFUSED) return null;
    throw error;
  }
  return outcome;
}
