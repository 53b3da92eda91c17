/** What a namespace has done since it was created; kept in its database across restarts. */
export interface Counters {
  pulls: number;
  resets: number;
  pushes: number;
  mutations: number;
  replays: number;
  appErrors: number;
  wakeFrames: number;
  errors: number;
  /**
   * Query-aware pulls: the queries they re-evaluated, of those the ones whose rows were copied
   * from another group alike, and the rows those evaluations produced.
   */
  queriesRecomputed: number;
  queriesCopied: number;
  queryRowsExamined: number;
  /** Rows the evaluations' EXISTS probes (or roots without one) examined (metered pulls; see `queryBudgetMs`). */
  queryWork: number;
}

export function emptyCounters(): Counters {
  return {
    pulls: 0,
    resets: 0,
    pushes: 0,
    mutations: 0,
    replays: 0,
    appErrors: 0,
    wakeFrames: 0,
    errors: 0,
    queriesRecomputed: 0,
    queriesCopied: 0,
    queryRowsExamined: 0,
    queryWork: 0,
  };
}
