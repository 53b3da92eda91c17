import type { QueryPages } from "@weir/engine-wasm";
import type { Dialect } from "@weir/protocol";
import type { Subscription } from "../audience/subscription.js";
import type { Claims } from "../auth/claims.js";
import type { QueryDefinition } from "../config/weir-config.js";
import type { FlowResult } from "../flows/flow-context.js";
import type { PullFlowResult } from "../flows/pull-flow.js";
import type { RecordWith } from "../flows/push-answers.js";
import type { ZeroGroupStore } from "./zero-group-store.js";

/** What the Zero dialect needs of a namespace: the native flows, and two looks at its state. */
export interface ZeroNamespace {
  readonly queries: Readonly<Record<string, QueryDefinition>> | undefined;
  readonly delegates: boolean;
  /**
   * A pull; `followers` may take its answer (see `runPull`); with `pages`, its queries' roots are
   * read in pages, and past the server's `queryPageMs` it stops (QueryPageTurn, see `queryPages`).
   */
  pull(
    dialect: Dialect,
    body: unknown,
    claims: Claims,
    followers?: readonly string[],
    pages?: QueryPages,
  ): PullFlowResult;
  /** Pages for a pull that stops after the server's `queryPageMs` and runs again later. */
  queryPages(): QueryPages;
  push(dialect: Dialect, body: unknown, claims: Claims, recordWith?: RecordWith): Promise<FlowResult>;
  pushDelegated(
    dialect: Dialect,
    body: unknown,
    claims: Claims,
    authorization: string | null,
    recordWith?: RecordWith,
  ): Promise<FlowResult>;
  /** The namespace's latest version. */
  watermark(): number;
  /**
   * Records a new client group as the user's, as a pull or push would (stored with the data, so
   * it holds across restarts); false when the group belongs to another user.
   */
  claimGroup(clientGroupID: string, userID: string): boolean;
  /** The last mutation id the namespace recorded for the client (0: none). */
  lastMutationID(clientGroupID: string, clientID: string): number;
  /** Each client's last mutation id in a group that belongs to `userID` (empty otherwise). */
  groupMutationIDs(clientGroupID: string, userID: string): Record<string, number>;
  /** Runs `fn` (the flows above, and writes of `zeroStore`) in one transaction. */
  transaction<T>(fn: () => T): T;
  /** What the dialect keeps of each group with the data. */
  readonly zeroStore: ZeroGroupStore;
  /** The group's active queries as the engine stored them. */
  storedQueries(clientGroupID: string): readonly { hash: string; name: string; args: unknown }[];
  /** What a caller with these claims must be poked for (the config's visibility, read). */
  subscriptionFor(claims: Claims): Subscription;
  /** A push starts (and stops) using the namespace, which stays open while any does. */
  enter(): void;
  leave(): void;
}
