import type { QueryPages } from "@weir/engine-wasm";
import { parsePullRequest, type QueryPatchOperation } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import { jsonParts } from "../http/http-parts.js";
import type { PullContext } from "./flow-context.js";
import { pollTurn } from "./next-turn.js";
import { runPagedPull } from "./paged-pull.js";
import { type PullFlowResult, runPull } from "./pull-flow.js";

/** How many new queries one step evaluates, learnt from what the steps before took. */
export interface StepSize {
  readonly size: number;
  took(puts: number, ms: number): void;
}

/** A native query-aware answer, as the engine writes it (`unknownQueries` added by the host). */
interface Answer {
  unknownQueries?: string[];
  cookie: number;
  lastMutationIDChanges: Record<string, number>;
  gotQueries?: string[];
  rowsPatch?: Array<{ op: string }>;
  unchanged?: true;
}

/**
 * A native pull whose `queries.patch` puts more queries than one step evaluates (`step.size`,
 * sized so that a step holds the thread about the server's `querySliceMs`): the patch is applied
 * in steps, each a pull of its own in its own transaction from the cookie the step before
 * answered, and the event loop has its turn between them, so requests to other namespaces are
 * answered in between instead of after the whole patch. The client gets one answer: every
 * step's rows in order (from the last `clear`, should a step reset), the mutation ids of all of
 * them, and the last step's cookie and complete queries. What it ends with is what one step
 * would give it. The change caps hold for the answer as a whole (a step after they are spent
 * still sends one row). Once the steps held the thread the server's `queryAnswerMs` (where pulls
 * are metered), the rest of the patch is one last step with no time left: the engine evaluates
 * its first new query and stores the rest deferred, and the answer is a part (the client pulls
 * the rest, as after a cut), so one request holds its namespace no longer than an answer's time
 * and one query (a namespace moving to another worker waits for its requests). Any other pull is
 * `runPull`'s at once.
 *
 * Each pull (the whole, or a step) reads its queries' roots in pages, other requests served
 * between them too (`runPagedPull`).
 *
 * A patch that would take the group past its caps (counting the queries it holds) is refused
 * before any step; a step refused otherwise (a query past its work budget) leaves the steps
 * before it applied, and the client, whose cookie the group is no longer at, gets every row of
 * its queries on its next pull.
 */
export async function runSlicedPull(
  ctx: PullContext,
  body: unknown,
  claims: Claims,
  step: StepSize,
  yieldTurn: () => Promise<void> = pollTurn,
): Promise<PullFlowResult> {
  // A step's time is its runs' (without the turns between them); `puts` teaches the step's size
  // (null: a step that defers its queries teaches nothing).
  let spentMs = 0;
  const timed = async (puts: number | null, run: (pages: QueryPages) => PullFlowResult) => {
    let ms = 0;
    const result = await runPagedPull(
      ctx,
      (pages) => {
        const started = performance.now();
        try {
          return run(pages);
        } finally {
          ms += performance.now() - started;
        }
      },
      yieldTurn,
    );
    spentMs += ms;
    if (puts !== null) step.took(puts, ms);
    return result;
  };
  // Every pull that puts queries teaches the step's size, whether it is sliced or not.
  const puts = countPuts(rawPatch(body));
  if (puts <= step.size)
    return timed(puts, (pages) => runPull(ctx, "native", body, claims, undefined, ctx.caps, pages));
  const parsed = parsedRequest(body);
  const patch = parsed?.queries?.patch ?? null;
  if (parsed === null || patch === null) return runPull(ctx, "native", body, claims);
  // Refused for the caps before any step, counting what the group holds: a later step refused
  // for them would leave the steps before it applied.
  ctx.engine.checkGroupCaps(
    ctx.store.db,
    { clientGroupID: parsed.clientGroupID, userID: claims.userID, ...ctx.queryLimits },
    patch,
  );
  const request = body as Record<string, unknown>;
  let cookie = request.cookie;
  let rest = patch;
  let merged: Answer | null = null;
  const log = { queryOps: 0, queryRows: 0, puts: 0, dels: 0, idsAdvanced: 0, txMs: 0, reset: false };
  let last: PullFlowResult | null = null;
  let bytes = 0;
  const metered = ctx.engine.metered(ctx.store.db);
  while (rest.length > 0) {
    if (last !== null) await yieldTurn();
    const spent = last !== null && metered && spentMs >= ctx.queryLimits.queryAnswerMs;
    const end = spent ? rest.length : stepEnd(rest, step.size);
    const ops = rest.slice(0, end);
    rest = rest.slice(end);
    const caps = {
      maxChangeRows: Math.max(1, ctx.caps.maxChangeRows - log.puts - log.dels),
      maxChangeBytes: Math.max(1, ctx.caps.maxChangeBytes - bytes),
      // Only the last step's answer names the complete queries (mergeAnswers keeps its names).
      nameCompleteQueries: rest.length === 0,
      ...(spent ? { answerMs: 0 } : {}),
    };
    const result = await timed(spent ? null : countPuts(ops), (pages) =>
      runPull(ctx, "native", { ...request, cookie, queries: { patch: ops } }, claims, undefined, caps, pages),
    );
    const answer = JSON.parse(result.response.body ?? "{}") as Answer;
    bytes += result.response.body?.length ?? 0;
    merged = merged === null ? answer : mergeAnswers(merged, answer);
    cookie = answer.cookie;
    for (const key of ["queryOps", "queryRows", "puts", "dels", "idsAdvanced", "txMs"] as const)
      log[key] += result.log[key] ?? 0;
    log.reset ||= result.log.reset === true;
    last = result;
  }
  return {
    response: jsonParts(JSON.stringify(merged)),
    log: { ...last!.log, ...log, cookieIn: request.cookie as number | null },
    ...(last!.more ? { more: true as const } : {}),
  };
}

/** The request's query patch as sent, unchecked (empty when it has none). */
function rawPatch(body: unknown): ReadonlyArray<{ op?: unknown }> {
  const ops = (body as { queries?: { patch?: unknown } } | null)?.queries?.patch;
  return Array.isArray(ops) ? ops : [];
}

/** The request, checked (null when it does not parse: `runPull` says why). */
function parsedRequest(body: unknown): ReturnType<typeof parsePullRequest> | null {
  try {
    return parsePullRequest(body, "native");
  } catch {
    return null;
  }
}

function countPuts(patch: ReadonlyArray<{ op?: unknown } | null>): number {
  let puts = 0;
  for (const op of patch) if (op?.op === "put") puts++;
  return puts;
}

/** Where a step of at most `maxPuts` puts ends (the operations before the next put past it). */
function stepEnd(patch: readonly QueryPatchOperation[], maxPuts: number): number {
  let puts = 0;
  let end = 0;
  for (; end < patch.length; end++) if (patch[end]!.op === "put" && ++puts > maxPuts) break;
  return end;
}

/** The answer of two steps, `later` applied after `earlier`. */
function mergeAnswers(earlier: Answer, later: Answer): Answer {
  if (later.unchanged) return { ...earlier, cookie: later.cookie };
  const rows = later.rowsPatch ?? [];
  // A step that reset (its rows start with `clear`) answers every row: the rows before it go.
  const reset = rows[0]?.op === "clear";
  const unknown = [...new Set([...(earlier.unknownQueries ?? []), ...(later.unknownQueries ?? [])])];
  return {
    ...(unknown.length > 0 ? { unknownQueries: unknown } : {}),
    cookie: later.cookie,
    lastMutationIDChanges: { ...earlier.lastMutationIDChanges, ...later.lastMutationIDChanges },
    gotQueries: later.gotQueries ?? [],
    rowsPatch: reset ? rows : [...(earlier.rowsPatch ?? []), ...rows],
  };
}
