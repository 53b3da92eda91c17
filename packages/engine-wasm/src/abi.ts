// The boundary between the compiled engine (assembly/) and its loader (src/): the marks, separators
// and layouts both sides read and write. Written once, compiled by AssemblyScript into the engine
// and by TypeScript into the loader, so this file holds constants only.

/** Query results and structured answers: rows by "\n", fields by "\t". */
export const ROW_SEPARATOR = "\n";
export const COLUMN_SEPARATOR = "\t";

/** A refusal comes back as "!<code>\t<message>" instead of a result. */
export const ERROR_MARK = "!";

/** The cookie of a client that has none (a pull from scratch). */
export const NULL_COOKIE = -1;

/** `pull` in caught-up-only mode: the pull has more to do and must run in a transaction. */
export const NEEDS_TRANSACTION = "?";

/**
 * Where the loader splices the row payloads the engine included into a pull body: the first
 * `included` payloads, joined by commas; after an operation, preceded by a comma. Neither
 * character occurs raw in JSON text.
 */
export const ROWS_HERE = "\x01";
export const ROWS_AFTER_OP_HERE = "\x02";

/**
 * Root rows a range of a query read in ranges reads (assembly/query/ranges.ts), unless the host
 * answers fewer for it (`_weir_range_rows`, RangeSizes).
 */
export const RANGE_ROWS = 2048;

/** The wire format a pull renders. */
export const FORMAT_NATIVE = 0;
export const FORMAT_REPLICACHE = 1;

/** A pull answers "<meta>\n<body>"; the meta fields, by position. */
export const PULL_COOKIE = 0;
export const PULL_RESET = 1;
export const PULL_INCLUDED = 2;
export const PULL_MUTATION_IDS = 3;
export const PULL_WATERMARK = 4;
export const PULL_FLOOR = 5;
export const PULL_UNCHANGED = 6;
/** A query-aware pull: the rows its query evaluations produced, and how many queries it evaluated. */
export const PULL_QUERY_ROWS_EXAMINED = 7;
export const PULL_QUERIES_RECOMPUTED = 8;
/** The answer was cut by a cap: the client pulls again at once. */
export const PULL_MORE = 9;
/** The length of the body's lastMutationIDChanges JSON (which follows `"lastMutationIDChanges":`). */
export const PULL_IDS_LENGTH = 10;
/** The followers that took a query-aware answer: JSON [[groupID, ids], ...], or empty. */
export const PULL_FOLLOWED = 11;
/** Of the queries a query-aware pull evaluated, those whose rows it copied from another group. */
export const PULL_QUERIES_COPIED = 12;

/**
 * A query patch: lines of "clear", "del\t<hash>" or "put\t<hash>\t<name>\t<args>\t<plan>\t<tables>"
 * (extras' indexes; `tables` is ",a,b,", the tables the plan reads).
 */
export const QUERY_OP_CLEAR = "clear";
export const QUERY_OP_DEL = "del";
export const QUERY_OP_PUT = "put";
/** A patch's first line may be "version\t<extra>": the transform version to store for the group. */
export const QUERY_OP_VERSION = "version";

/** Visibility filters: "<table>\x01<param count>\x01<sql>" entries joined by "\x02". */
export const FILTER_ENTRY_SEPARATOR = "\x02";
export const FILTER_FIELD_SEPARATOR = "\x01";

/** A parameter `{"$":k}` stands for the call's k-th extra parameter, kept on the host side. */
export const EXTRA_PARAM_KEY = "$";

/** What a preflight finds a mutation to be. */
export const PREFLIGHT_APPLY = "apply";
export const PREFLIGHT_REPLAY = "replay";
export const PREFLIGHT_OUT_OF_ORDER = "ooo";

/** What install did. */
export const INSTALL_CREATED = "created";
export const INSTALL_UNCHANGED = "unchanged";
export const INSTALL_MIGRATED = "migrated";

/**
 * Finds whether a database has the query tables (query-aware pulls create them together, the
 * group table first): the engine and its loader both ask it.
 */
export const QUERY_TABLES_PROBE =
  "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_weir_query_groups'";

/** What an upstream batch did. */
export const UPSTREAM_APPLIED = "applied";
export const UPSTREAM_ALREADY_APPLIED = "already_applied";

/** A boolean in an answer. */
export const TRUE = "1";
export const FALSE = "0";

/**
 * A query plan (a checked query AST, see src/query-plan.ts and assembly/query/plan.ts): tokens
 * joined by "\x01". A column is "#<name>", a null "N", any other value "=<JSON>" (JSON text
 * escapes every control character, so no value holds the separator).
 */
export const PLAN_TOKEN_SEPARATOR = "\x01";
export const PLAN_QUERY = "Q";
/** A query node that holds the witnesses of a condition (src/condition-witnesses.ts). */
export const PLAN_WITNESS = "W";
export const PLAN_NONE = "-";
export const PLAN_START = "S";
export const PLAN_AND = "A";
export const PLAN_OR = "O";
export const PLAN_COMPARE = "C";
export const PLAN_EXISTS = "E";
export const PLAN_COLUMN = "#";
export const PLAN_NULL = "N";
export const PLAN_VALUE = "=";
/** Comparisons the plan names that SQL writes otherwise: LIKE as GLOB (case-sensitive). */
export const PLAN_GLOB = "GLOB";
export const PLAN_NOT_GLOB = "NOT GLOB";

/** The name of an index the engine derived from a query's plan starts so (assembly/query/indexes.ts). */
export const DERIVED_INDEX_PREFIX = "_weir_qx:";
