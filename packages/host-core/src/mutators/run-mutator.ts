import type { MutationResult } from "@weir/protocol";
import type { MutatorContextSource } from "../flows/flow-context.js";
import type { MutatorContext } from "./mutator.js";
import { MutatorError } from "./mutator-error.js";
import { createMutatorTx, isConstraintError } from "./mutator-tx.js";

export type MutatorOutcome =
  | { ok: true; deferred: Array<() => void | Promise<void>> }
  /** `wrote`: the mutator ran outside a nested transaction, so its writes may still stand. */
  | { ok: false; error: MutationResult; wrote: boolean };

/**
 * Runs one named mutator in the batch's transaction, `isolated` in a nested one of its own. A
 * refusal (MutatorError, a constraint, an unknown name) becomes an application error, whose
 * writes an isolated run has rolled back; any other error propagates and fails the whole push,
 * which the client retries.
 */
export function runMutator(
  source: MutatorContextSource,
  name: string,
  args: unknown,
  ctx: MutatorContext,
  isolated = true,
): MutatorOutcome {
  const mutator = Object.hasOwn(source.mutators, name) ? source.mutators[name] : undefined;
  if (!mutator) return appError(`unknown mutator ${JSON.stringify(name)}`, undefined, false);
  const deferred: Array<() => void | Promise<void>> = [];
  const tx = createMutatorTx({
    db: source.store.db,
    tables: source.tables,
    claims: ctx.claims,
    clientID: ctx.clientID,
    deferred,
  });
  try {
    const run = () => {
      const returned: unknown = mutator(tx.api, args, ctx);
      if (isThenable(returned)) {
        returned.then(undefined, () => {});
        throw new Error(
          `mutator ${JSON.stringify(name)} returned a Promise: mutators must be synchronous (SQLite transactions are); queue async effects with tx.defer`,
        );
      }
    };
    if (isolated) source.store.transaction(run);
    else run();
    return { ok: true, deferred };
  } catch (error) {
    if (error instanceof MutatorError) return appError(error.message, error.details, !isolated);
    if (isConstraintError(error)) return appError((error as Error).message, undefined, !isolated);
    throw error;
  } finally {
    // A mutator that kept `tx` (in a callback or after an await) must not write outside its transaction.
    tx.close();
  }
}

function appError(message: string, details: unknown, wrote: boolean): MutatorOutcome {
  const error: MutationResult =
    details === undefined ? { error: "app", message } : { error: "app", message, details };
  return { ok: false, error, wrote };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
