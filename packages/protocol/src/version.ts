/**
 * The version of weir's wire contract. Bump it whenever a wire schema changes shape;
 * `schema-fingerprint.test.ts` fails until the bump and its fingerprint are recorded.
 *
 * History:
 * - 1: native pull/push, Replicache pull/push v1, admin knobs.
 * - 2: the error body (`ErrorBody`) as a schema; the visibility knob answers `invalidated`.
 * - 3: the upstream contract's answers (changes, snapshot pages, 410 gone) and its watermarks.
 * - 4: notify and its answer, the ingest admin answers, `ingest_paused`; delegated push (the
 *   mutate call and its answer, `app_unavailable`, `mutate_failed`).
 * - 5: the query AST (`QueryAST`, `QueryCondition`): the subset of Zero's that weir evaluates.
 * - 6: query-aware pull: the native pull's `queries: { patch }` (`QueryPatchOperation`), the
 *   answer's `gotQueries` and `unknownQueries`; the queries admin knob (`QueriesRequest`).
 * - 7: integers beyond 2^53 in rows (pulls, pokes) are decimal strings; `breaker/reopen` takes
 *   `{ resnapshot }` (`BreakerReopenRequest`) and answers the generation's pass.
 * - 8: Zero's wire (sync protocol v51) as schemas: each message up (`ZERO_UPSTREAM_BODIES`) and
 *   down (`ZERO_DOWNSTREAM_BODIES`), pokes, refusals and `transformError` included.
 */
export const PROTOCOL_VERSION = 8;
