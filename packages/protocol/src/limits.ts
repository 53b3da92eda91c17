/** Bounds on the sizes of wire fields, so a hostile body cannot make the server do unbounded work. */
export const MAX_ID_LENGTH = 256;
export const MAX_MUTATOR_NAME_LENGTH = 128;
export const MAX_MUTATIONS_PER_PUSH = 10_000;
/** An upstream page without a `limit` holds up to 1,000 changes or rows; none asks for more than 100,000. */
export const DEFAULT_UPSTREAM_LIMIT = 1_000;
export const MAX_UPSTREAM_LIMIT = 100_000;
/** How many operations a pull's query patch may carry. */
export const MAX_QUERY_PATCH_OPS = 1_000;
