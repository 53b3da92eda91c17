import type { MutateRequest, MutateResponse } from "@weir/protocol";

/** What a mutator knows of the mutation it applies. */
export interface MutationContext {
  namespace: string;
  clientGroupID: string;
  clientID: string;
  mutationID: number;
  /** The client's Authorization, as weir passed it on. */
  authorization: string | null;
}

export type Mutation = MutateRequest["mutations"][number];
type MutationResult = MutateResponse["mutations"][number]["result"];

/** What became of one mutation. */
export type MutationOutcome =
  | {
      kind: "applied";
      /** `{}`, or the application error the mutator threw (its writes rolled back). */
      result: MutationResult;
      /** Where the store stood right after this mutation's commit, when the ledger reads it. */
      position?: bigint | null;
    }
  /** The client's recorded id is behind this one: the app's store lost mutations weir holds. */
  | { kind: "ooo" };

/**
 * The app's record of each client's last applied mutation id, kept in the app's own store beside
 * its tables, so that a mutation and its id commit together. One per store (SQLite, PostgreSQL);
 * the rules around it (order, replays, refusals, the answer) are `processMutations`'.
 */
export interface MutateLedger {
  /**
   * Runs `mutation` once: in one transaction, advance the client's last mutation id from
   * `id - 1` to `id` and run the mutator, whose throw rolls its writes back but still records the
   * id. A mutation at or below the recorded id is a replay (applied, `{}`, nothing run); one
   * beyond the next is out of order. `last` is the push's last mutation.
   */
  apply(
    mutation: Mutation,
    context: MutationContext,
    last: boolean,
  ): MutationOutcome | Promise<MutationOutcome>;
  /** The answer's watermark, given the position the last mutation's outcome carried. */
  watermark(lastPosition: bigint | null): bigint | Promise<bigint>;
  /** Whether a failure of `apply` is a race the whole attempt is retried for (a deadlock). */
  retryable?(error: unknown): boolean;
}
