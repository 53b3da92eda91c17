import { type QueryPages, QueryPageTurn } from "@weir/engine-wasm";
import type { PullContext } from "./flow-context.js";
import { pollTurn } from "./next-turn.js";
import type { PullFlowResult } from "./pull-flow.js";

/**
 * Runs a pull whose queries' roots, or whose reset, are read in pages (`QueryPages`): a run that
 * has held the thread the server's `queryPageMs` stops after the page it is in, its transaction
 * rolled back, and runs again after other requests had their turn, going on from the pages it
 * kept. The last run answers, as one statement per query or one read of a reset would have (a
 * query's pages are read again should the namespace's version move in between; a reset's are
 * caught up through the change log); each query's work budget counts every run's time. A range
 * of a query read in ranges that passes its step's budget stops a run too, to be read smaller
 * (RangeSizes). The answer's log says how many runs were stopped (`pageTurns`).
 */
export async function runPagedPull(
  ctx: PullContext,
  run: (pages: QueryPages) => PullFlowResult,
  yieldTurn: () => Promise<void> = pollTurn,
): Promise<PullFlowResult> {
  const pages = ctx.queryPages();
  for (;;) {
    try {
      const result = run(pages);
      return pages.turns > 0 ? { ...result, log: { ...result.log, pageTurns: pages.turns } } : result;
    } catch (error) {
      if (!(error instanceof QueryPageTurn)) throw error;
    }
    await yieldTurn();
  }
}
