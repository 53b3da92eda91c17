import { type Engine, EngineError, type QueryPages } from "@weir/engine-wasm";
import { subscriptionFor } from "../audience/subscription.js";
import { authenticateRequest } from "../auth/authenticate-request.js";
import type { Claims } from "../auth/claims.js";
import type { ResolvedConfig } from "../config/weir-config.js";
import type { Logger } from "../ports/logger.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { ZeroGroupStore } from "../zero/zero-group-store.js";
import type { ZeroNamespace } from "../zero/zero-namespace.js";

/** The namespace's own calls that Zero's view of it passes on (its flows, guarded as any other). */
export type ZeroCalls = Pick<
  ZeroNamespace,
  "pull" | "push" | "pushDelegated" | "transaction" | "enter" | "leave"
>;

export interface ZeroParts {
  config: ResolvedConfig;
  engine: Engine;
  store: NamespaceStore;
  zeroStore: ZeroGroupStore;
  delegates: boolean;
  /** Installs a namespace nothing was written to yet, before Zero reads it. */
  install(): void;
  /** A poke's paging (the namespace's, as its pulls', QueryReads.queryPages). */
  queryPages(): QueryPages;
}

/** What the Zero dialect sees of a namespace: its calls, the engine's client groups, the config. */
export function zeroNamespace(calls: ZeroCalls, parts: ZeroParts): ZeroNamespace {
  const { config, engine, store } = parts;
  // Zero reads the engine's client records outside transactions: they must exist first.
  const db = () => {
    parts.install();
    return store.db;
  };
  return {
    queries: config.queries,
    delegates: parts.delegates,
    zeroStore: parts.zeroStore,
    pull: (dialect, body, claims, followers, pages) => calls.pull(dialect, body, claims, followers, pages),
    queryPages: parts.queryPages,
    push: (dialect, body, claims, recordWith) => calls.push(dialect, body, claims, recordWith),
    pushDelegated: (dialect, body, claims, authorization, recordWith) =>
      calls.pushDelegated(dialect, body, claims, authorization, recordWith),
    transaction: (fn) => calls.transaction(fn),
    enter: () => calls.enter(),
    leave: () => calls.leave(),
    subscriptionFor: (claims) => subscriptionFor(config.schema, config.visibility, claims),
    watermark: () => engine.state(db()).watermark,
    lastMutationID: (clientGroupID, clientID) =>
      engine.preflight(db(), { clientGroupID, clientID, mutationID: 1 }).lastMutationID,
    claimGroup: (clientGroupID, userID) => {
      try {
        store.transaction(() => engine.claimGroup(store.db, clientGroupID, userID));
        return true;
      } catch (error) {
        if (error instanceof EngineError && error.code === "forbidden") return false;
        throw error;
      }
    },
    groupMutationIDs: (clientGroupID, userID) => engine.groupMutationIDs(db(), clientGroupID, userID),
    storedQueries: (clientGroupID) => engine.groupQueries(db(), clientGroupID).queries,
  };
}

/** Checks the token a Zero socket sends later (`updateAuth`) as the config authenticates requests. */
export function zeroReauthenticate(
  config: ResolvedConfig,
  logger: Logger,
): (token: string) => Promise<Claims> {
  return (token) =>
    Promise.resolve(
      authenticateRequest(config, logger, {
        method: "GET",
        url: "http://zero/",
        headers: new Headers({ authorization: `Bearer ${token}` }),
      }),
    );
}
