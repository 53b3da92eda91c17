/** Bounds on the sizes of wire fields, so a hostile body cannot make the server do unbounded work. */
export const MAX_ID_LENGTH = 256;
export const MAX_MUTATOR_NAME_LENGTH = 128;
export const MAX_MUTATIONS_PER_PUSH = 10_000;
/** How many operations a pull's query patch may carry. */
export const MAX_QUERY_PATCH_OPS = 1_000;
