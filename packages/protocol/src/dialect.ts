/** The two HTTP dialects weir speaks: its own (native) and the stock Replicache client's. */
export type Dialect = "native" | "replicache";
