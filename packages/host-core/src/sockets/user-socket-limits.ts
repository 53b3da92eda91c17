/** Wake and Zero sockets one user may hold open at once, by default. */
export const DEFAULT_MAX_SOCKETS_PER_USER = 100;
/**
 * Messages a second that all of one user's sockets together are taken in at, by default: twice a
 * Zero socket's own pace, with a burst of five seconds of it.
 */
export const DEFAULT_USER_MESSAGES_PER_SECOND = 200;

/** A host's caps on one user's sockets (`null`: no cap on how many). */
export interface UserSocketOptions {
  maxSocketsPerUser?: number | null;
  userMessagesPerSecond?: number;
}

/** What is wrong with the options, one line each (none: they are valid). */
export function userSocketProblems(options: UserSocketOptions): string[] {
  const problems: string[] = [];
  const perUser = options.maxSocketsPerUser;
  if (perUser !== undefined && perUser !== null && !(Number.isSafeInteger(perUser) && perUser >= 1)) {
    problems.push("maxSocketsPerUser: expected an integer of at least 1, or null for no cap");
  }
  const messages = options.userMessagesPerSecond;
  if (messages !== undefined && !(Number.isSafeInteger(messages) && messages >= 1)) {
    problems.push("userMessagesPerSecond: expected an integer of at least 1");
  }
  return problems;
}

/** A socket refused: its user holds as many as one may (429), or the server does (503). */
export class TooManySockets extends Error {
  readonly status: 429 | 503;
  readonly code: "too_many_sockets" | "server_busy";
  /** The refusal's headers: a Retry-After when the server is full. */
  readonly headers: Record<string, string>;

  constructor(max: number, whose: "user" | "server") {
    const sockets = `${max} socket${max === 1 ? "" : "s"}`;
    super(
      whose === "user"
        ? `this user has ${sockets} open, the most one user may; close one to open another`
        : `the server holds ${sockets}, as many as it may; try again later`,
    );
    this.status = whose === "user" ? 429 : 503;
    this.code = whose === "user" ? "too_many_sockets" : "server_busy";
    this.headers = whose === "user" ? {} : { "retry-after": "5" };
  }

  /** The refusal as an HTTP answer's JSON body. */
  body(): string {
    return JSON.stringify({ error: this.code, message: this.message });
  }
}
