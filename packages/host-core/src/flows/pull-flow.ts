import { pullVisibilityIdentity, type QueryPages } from "@weir/engine-wasm";
import { type Dialect, parsePullRequest } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { HttpError } from "../http/http-error.js";
import { jsonParts } from "../http/http-parts.js";
import { isUnsupportedVersion } from "../http/refusal.js";
import { elapsedMs } from "../ports/clock.js";
import { fireFault } from "./fault.js";
import type { FlowResult, PullContext } from "./flow-context.js";
import {
  currentTransformVersion,
  reresolved,
  resolveQueries,
  withUnknownQueries,
} from "./resolve-queries.js";

/** A pull's result, with the answers of the followers that took it (see `runPull`). */
export interface PullFlowResult extends FlowResult {
  followed?: ReadonlyArray<{ clientGroupID: string; body: string }>;
  /** The answer is a part: rows are still owed, or queries wait (the engine's `more`). */
  more?: true;
}

/**
 * A pull's caps; a step of a sliced pull before its last also says its answer need not name the
 * group's complete queries (no client sees it: the last step's names them), and a step after the
 * answer's time is spent says how much is left of it (`answerMs`, in place of the server's
 * `queryAnswerMs`).
 */
export type PullStepCaps = PullContext["caps"] & {
  readonly nameCompleteQueries?: boolean;
  readonly answerMs?: number;
};

/**
 * Pull in either dialect: changes since the cookie, through the visibility filter of these
 * claims. `followers`: other groups of the same user that the caller holds at the same cookie with
 * the same queries; those the engine finds holding this group's state take its answer
 * (`PullFlowResult.followed`), the rest are left for pulls of their own. `caps`: the answer's
 * caps, the namespace's unless a step of a sliced pull has sent part of them already. `pages`:
 * the queries' roots are read in pages, and the pull may stop between them (`QueryPageTurn`,
 * its transaction rolled back): the caller runs it again with the same `pages` (see
 * `runPagedPull`).
 */
export function runPull(
  ctx: PullContext,
  dialect: Dialect,
  body: unknown,
  claims: Claims,
  followers?: readonly string[],
  caps: PullStepCaps = ctx.caps,
  pages?: QueryPages,
): PullFlowResult {
  let input: ReturnType<typeof parsePullRequest>;
  try {
    input = parsePullRequest(body, dialect);
  } catch (error) {
    // Replicache expects this exact body (with a 200) to tell its user to update the app.
    if (dialect === "replicache" && isUnsupportedVersion(error)) {
      return { response: jsonParts({ error: "VersionNotSupported", versionType: "pull" }), log: {} };
    }
    throw error;
  }
  const { engine, store, knobs, counters, clock } = ctx;
  const started = clock.monotonic();
  if (input.queries && !knobs.queriesEnabled) {
    throw new HttpError("queries_disabled", "query-aware pull is switched off for this namespace");
  }
  // The lean engine (a host's choice for a config without named queries) has no query engine.
  if (input.queries && !engine.queryEngine) {
    throw new HttpError(
      "queries_disabled",
      "this server's engine has no query engine: it defines no named queries",
    );
  }
  // Named queries resolve to ASTs here, on the server, before anything is read or written.
  const transformVersion = input.queries ? currentTransformVersion(ctx, claims) : undefined;
  const patch = input.queries
    ? [...reresolved(ctx, input.clientGroupID, transformVersion), ...input.queries.patch]
    : [];
  const queries = input.queries ? resolveQueries(ctx, patch, claims) : null;
  // A caught-up pull, the common case, is answered from memory: no SQL, no transaction. A pull
  // with queries asks the engine, which knows whether the group's membership is at its cookie.
  const armed = knobs.faults.pull_during_tx !== undefined || queries !== null;
  // The rows follow the caller's claims as they are now: an answer remembered for a group is
  // given again only under the same visibility.
  const visibility = ctx.visibilityFor(claims);
  const identity = pullVisibilityIdentity(visibility);
  const known = armed
    ? undefined
    : ctx.caughtUp.answer(dialect, input.clientGroupID, claims.userID, input.cookie, identity);
  if (known) {
    fireFault(knobs, "pull_after_commit");
    counters.pulls++;
    return {
      response: jsonParts(known.body),
      log: {
        cookieIn: input.cookie,
        cookieOut: known.watermark,
        reset: false,
        floor: known.floor,
        watermark: known.watermark,
        puts: 0,
        dels: 0,
        idsAdvanced: 0,
        txMs: elapsedMs(clock, started),
      },
    };
  }
  const pull = {
    clientGroupID: input.clientGroupID,
    userID: claims.userID,
    cookie: input.cookie,
    dialect,
    visibility,
    maxChangeRows: caps.maxChangeRows,
    maxChangeBytes: caps.maxChangeBytes,
    ...(queries
      ? {
          queries: {
            patch: queries.patch,
            ...(transformVersion === undefined ? {} : { transformVersion }),
          },
        }
      : {}),
    maxQueryRows: ctx.maxQueryRows,
    queryBudgetMs: ctx.queryLimits.queryBudgetMs,
    queryTotalBudgetMs: ctx.queryLimits.queryTotalBudgetMs,
    answerMs: caps.answerMs ?? ctx.queryLimits.queryAnswerMs,
    maxGroupQueries: ctx.queryLimits.maxGroupQueries,
    maxGroupQueryBytes: ctx.queryLimits.maxGroupQueryBytes,
    ...(pages ? { queryPages: pages } : {}),
    ...(caps.nameCompleteQueries === false ? { nameCompleteQueries: false } : {}),
    ...(queries && followers && followers.length > 0 ? { followers } : {}),
  };
  // Otherwise a caught-up pull is one read statement and needs no transaction (unless a fault is
  // armed inside it, or the pull is behind for certain). Any other pull reads several tables,
  // which must be seen at one instant.
  // A namespace nothing was written to answers its empty state without being installed.
  const pristine = queries === null && ctx.pristine?.() === true ? engine.pullPristine(store.db, pull) : null;
  const caughtUp =
    pristine ??
    (knobs.faults.pull_during_tx !== undefined || ctx.caughtUp.behind(input.cookie)
      ? null
      : engine.pullIfCaughtUp(store.db, pull));
  const result =
    caughtUp ??
    store.transaction(() => {
      fireFault(knobs, "pull_during_tx");
      return engine.pull(store.db, pull);
    });
  ctx.caughtUp.remember(dialect, input.clientGroupID, claims.userID, identity, result);
  for (const follower of result.followed ?? [])
    ctx.caughtUp.remember(dialect, follower.clientGroupID, claims.userID, identity, follower);
  const txMs = elapsedMs(clock, started);
  fireFault(knobs, "pull_after_commit");
  counters.pulls += 1 + (result.followed?.length ?? 0);
  if (result.reset) counters.resets++;
  counters.queriesRecomputed += result.queriesRecomputed;
  counters.queriesCopied += result.queriesCopied;
  counters.queryRowsExamined += result.queryRowsExamined;
  counters.queryWork += result.queryWork;
  return {
    ...(result.followed ? { followed: result.followed } : {}),
    ...(result.more ? { more: true as const } : {}),
    response: jsonParts(queries ? withUnknownQueries(result.body, queries.unknown) : result.body),
    log: {
      cookieIn: input.cookie,
      cookieOut: result.cookie,
      reset: result.reset,
      floor: result.floor,
      watermark: result.watermark,
      puts: result.puts,
      dels: result.dels,
      idsAdvanced: result.lastMutationIDs,
      txMs,
      ...(queries ? { queryOps: patch.length, queryRows: result.queryRowsExamined + result.queryWork } : {}),
    },
  };
}
