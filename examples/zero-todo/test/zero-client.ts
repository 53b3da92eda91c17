import { createBuilder, Zero } from "@rocicorp/zero";
import { WebSocket } from "ws";
import { mutators, type TodoContext } from "../src/mutators.js";
import { queries } from "../src/queries.js";
import { schema } from "../src/schema.js";

/** Every socket the clients opened, with the URL it connected to and the frames it received. */
export const sockets: RecordingSocket[] = [];

/** `ws` as the browser's WebSocket, recording what the client connects to and receives. */
class RecordingSocket extends WebSocket {
  readonly received: unknown[][] = [];
  /** The code the socket closed with (null while open). */
  closeCode: number | null = null;
  /**
   * Frames are recorded but not passed on to the client (as a socket that dropped while the
   * server sent them): the client misses them.
   */
  muted = false;

  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols);
    this.connectURL = new URL(url);
    sockets.push(this);
    this.on("message", (data) => this.received.push(JSON.parse(data.toString()) as unknown[]));
    this.on("close", (code) => {
      this.closeCode = code;
    });
    // The client hears errors through its own listeners, and may drop them once it gave up on a
    // socket (a connect refused while the server restarts): such an error is not the test's.
    this.on("error", () => {});
  }

  readonly connectURL: URL;

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === "message" && this.muted) {
      this.received.push(JSON.parse(String(args[0])) as unknown[]);
      return false;
    }
    return super.emit(event, ...args);
  }
}

/**
 * What a client's sockets connected with and received, a line each (for a failure's message):
 * the base cookie, the close code, and each frame's type (a pokeEnd with its cookie).
 */
export function socketTrace(clientID: string): string {
  return sockets
    .filter((s) => s.connectURL.searchParams.get("clientID") === clientID)
    .map((s) => {
      const frames = s.received.map((frame) =>
        frame[0] === "pokeEnd" ? `pokeEnd(${(frame[1] as { cookie?: string }).cookie})` : String(frame[0]),
      );
      return `baseCookie=${s.connectURL.searchParams.get("baseCookie")} closed=${s.closeCode}: ${frames.join(" ")}`;
    })
    .join("\n");
}

// The stock client in Node: `ws` as its WebSocket, and the little of `navigator` it reads.
const globals = globalThis as Record<string, unknown>;
globals.WebSocket = RecordingSocket;
globals.navigator ??= { onLine: true, userAgent: "node" };

/** A stock Zero client (memory store, a new client group each time) of `user` at `cacheURL`. */
export function zeroClient(
  cacheURL: string,
  user: string,
  options: { storageKey?: string; onClientStateNotFound?: () => void } = {},
) {
  const context: TodoContext = { userID: user };
  return new Zero({
    cacheURL,
    userID: user,
    auth: user,
    schema,
    mutators,
    context,
    kvStore: "mem",
    logLevel: "error",
    ...(options.storageKey ? { storageKey: options.storageKey } : {}),
    ...(options.onClientStateNotFound ? { onClientStateNotFound: options.onClientStateNotFound } : {}),
  });
}

export type TodoZero = ReturnType<typeof zeroClient>;

export { mutators, queries };

/** Zero's query builder over the schema: a query of it is not a named query, so weir syncs none. */
export const zql = createBuilder(schema);

/** The rows the client holds locally (no server round trip, and nothing subscribed). */
export async function localTodos<T>(z: TodoZero): Promise<T[]> {
  return (await z.run(zql.todo.orderBy("sort", "asc"), { type: "unknown" })) as unknown as T[];
}

/**
 * Resolves once the query is complete (the server sent all its rows) and `check` holds of its
 * rows as the client sees them; rejects after `ms`.
 */
export async function rowsOf<T>(
  z: TodoZero,
  query: unknown,
  check: (rows: readonly T[]) => boolean,
  ms = 10_000,
): Promise<readonly T[]> {
  const view = z.materialize(query as Parameters<TodoZero["materialize"]>[0]);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`rows did not arrive in ${ms} ms`)), ms);
      view.addListener((data: unknown, resultType: unknown) => {
        const rows = data as readonly T[];
        if (resultType === "complete" && check(rows)) {
          clearTimeout(timer);
          resolve([...rows]);
        }
      });
    });
  } finally {
    view.destroy();
  }
}
