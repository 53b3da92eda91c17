import type { Dialect, PushBatch } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { jsonParts } from "../http/http-parts.js";
import type { MutatorContext } from "../mutators/mutator.js";
import { runMutator } from "../mutators/run-mutator.js";
import { elapsedMs } from "../ports/clock.js";
import { fireFault } from "./fault.js";
import type { FlowResult, PushContext } from "./flow-context.js";
import { pollTurn } from "./next-turn.js";
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
 * Push in either dialect. The batch runs in slices: each slice is one transaction and commits
 * as one version, and holds the thread about `sliceMs` (at least 32 mutations a slice, unless
 * fewer held it 40 ms). A batch
 * that takes longer is committed slice by slice, the event loop having its turn between them, so
 * a large push does not hold other namespaces' requests for all of it. Every mutation's writes
 * and the advance of its id commit together, so a failure between slices leaves the slices
 * before it applied, which the client's push again answers as already processed. An application
 * error rolls back only that mutation's writes (see runBatch) while its id still advances with
 * the rest. Nothing is acknowledged before the commit, and deferred effects run only after it.
 */
export async function runPush(
  ctx: PushContext,
  dialect: Dialect,
  body: unknown,
  claims: Claims,
  sliceMs: number,
  recordWith?: RecordWith,
  yieldTurn: () => Promise<void> = pollTurn,
): Promise<FlowResult> {
  const batch = parseBatch(dialect, body);
  if (!("clientGroupID" in batch)) return batch;
  const { knobs, clock } = ctx;
  checkWriter(knobs);

  const entries: Entry[] = [];
  let stoppedAt = -1;
  let txMs = 0;
  let slices = 0;
  let idsAdvanced = 0;
  let appErrors = 0;
  for (let from = 0; from < batch.mutations.length && stoppedAt < 0; ) {
    if (slices > 0) await yieldTurn();
    const started = clock.monotonic();
    // A group whose owner a committed pull or push showed needs no look in the database.
    const owned = ctx.caughtUp.knowsOwner(batch.clientGroupID, claims.userID);
    // Mutators run side by side in the slice's transaction; only when one refuses is the slice
    // rolled back and run again with each mutation in a nested transaction of its own, so that
    // the refused one's writes alone are undone. Refusals are rare, and savepoints cost.
    const slice =
      runBatch(ctx, dialect, batch, from, sliceMs, claims, owned, false, recordWith) ??
      (runBatch(ctx, dialect, batch, from, sliceMs, claims, owned, true, recordWith) as BatchOutcome);
    txMs += elapsedMs(clock, started);
    slices++;
    ctx.caughtUp.rememberOwner(batch.clientGroupID, claims.userID);
    entries.push(...slice.entries);
    stoppedAt = slice.stoppedAt;
    from = slice.end;

    const counters = ctx.counters;
    if (slices === 1) counters.pushes++;
    counters.mutations += slice.applied;
    counters.appErrors += slice.appErrors;
    counters.replays += slice.replays;
    if (slice.applied > 0) {
      ctx.runDeferred(slice.deferred);
      ctx.committed(slice.writers, { user: claims.userID });
    }
    if (slice.applied + slice.appErrors > 0) ctx.retention(slice.applied + slice.appErrors);
    idsAdvanced += slice.applied + slice.appErrors;
    appErrors += slice.appErrors;
  }
  fireFault(knobs, "push_after_commit_before_response");

  const log = {
    mutations: batch.mutations.length,
    idsAdvanced,
    appErrors,
    txMs,
    ...(slices > 1 ? { pushSlices: slices } : {}),
  };
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
  /** The index of the first mutation the slice left to the next. */
  end: number;
  applied: number;
  appErrors: number;
  replays: number;
}

/**
 * The fewest and the most mutations one slice runs: a push of a few mutations is one version
 * however slow the machine, and a push of cheap ones is not preflighted whole at every slice.
 */
const MIN_SLICE_MUTATIONS = 32;
const MAX_SLICE_MUTATIONS = 1_024;
/**
 * How long a slice of fewer than MIN_SLICE_MUTATIONS may hold the thread (or `pushSliceMs`, if
 * longer): mutations that each write much (an import of a thousand rows a mutation) are sliced
 * too, so that no slice holds the thread past a step's budget (50 ms on the Node host).
 */
const FEW_MUTATIONS_MS = 40;

/** Thrown through the batch's transaction to roll it back when a mutator refused. */
const REFUSED = Symbol("a mutator refused");

/**
 * A slice of the batch in one transaction: its mutations from index `from` on, until it has run
 * `sliceMs` (at least MIN_SLICE_MUTATIONS of them unless they ran FEW_MUTATIONS_MS, at least one,
 * at most MAX_SLICE_MUTATIONS). Not `isolated`, a mutator's refusal rolls the slice back and
 * answers null; `isolated`, each mutator runs in a nested transaction and a refusal becomes its
 * application error.
 */
function runBatch(
  ctx: PushContext,
  dialect: Dialect,
  batch: PushBatch,
  from: number,
  sliceMs: number,
  claims: Claims,
  owned: boolean,
  isolated: boolean,
  recordWith?: RecordWith,
): BatchOutcome | null {
  const { engine, store, knobs, clock } = ctx;
  const started = clock.monotonic();
  const until = started + sliceMs;
  const fewUntil = started + Math.max(FEW_MUTATIONS_MS, sliceMs);
  const outcome: BatchOutcome = {
    entries: [],
    writers: new Set(),
    deferred: [],
    stoppedAt: -1,
    end: from,
    applied: 0,
    appErrors: 0,
    replays: 0,
  };
  try {
    store.transaction(() => {
      if (!owned) engine.claimGroup(store.db, batch.clientGroupID, claims.userID);
      // One preflight and one finalize for the whole slice: its mutations share one version.
      // The preflight reads the ids as the slices before left them.
      const mutations = batch.mutations.slice(from, from + MAX_SLICE_MUTATIONS);
      const preflights = engine.preflightBatch(
        store.db,
        batch.clientGroupID,
        mutations.map((m) => ({ clientID: m.clientID, mutationID: m.id })),
      );
      const processed: { clientID: string; mutationID: number }[] = [];
      for (const [offset, mutation] of mutations.entries()) {
        if (offset > 0 && clock.monotonic() >= (offset >= MIN_SLICE_MUTATIONS ? until : fewUntil)) break;
        const index = from + offset;
        outcome.end = index + 1;
        fireFault(knobs, "push_before_mutation");
        const preflight = preflights[offset]!;
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
