/**
 * What a Zero message costs its user: a push (and its mutations), a change of queries (and its
 * operations), or, after a poke, the rows its query evaluations produced or examined (charged,
 * never refused: the work is done).
 */
export type ZeroMessageCost =
  | { kind: "push"; mutations: number }
  | { kind: "queries"; ops: number }
  | { kind: "evaluated"; rows: number };

/**
 * Charges a Zero connection's messages to its user's request budget, as HTTP requests are: a
 * socket is one request to open, and each push or change of queries on it is charged as the
 * push or pull it causes. Throws the host's 429 (`rate_limited`, with Retry-After) when the
 * budget is spent; nothing of the message is applied then.
 */
export type ZeroMeter = (userID: string, cost: ZeroMessageCost) => void;
