import WebSocket from "ws";

/** Zero's Sec-WebSocket-Protocol: URI-encoded base64 of the JSON of the first message and the token. */
export function zeroSecProtocol(init: unknown, authToken: string): string {
  return encodeURIComponent(
    Buffer.from(JSON.stringify({ initConnectionMessage: init, authToken })).toString("base64"),
  );
}

/** A Zero socket spoken by hand: every message it received, in order. */
export interface ZeroTestSocket {
  ws: WebSocket;
  messages: unknown[][];
  /** The body of the first message of this type (waiting for one). */
  next(type: string): Promise<unknown>;
  closed: Promise<{ code: number; reason: string }>;
}

export interface ZeroConnectOptions {
  version?: number;
  group?: string;
  clientID?: string;
  cookie?: string;
  /** The connect URL's lmid (default 0). */
  lmid?: number;
  /** The user whose token the protocol header carries (default alice). */
  user?: string;
  protocol?: string;
}

/** Opens `/<ns>/sync/v<N>/connect` of the host at `url`, sending an empty initConnection. */
export function connectZero(
  url: string,
  ns: string,
  options: ZeroConnectOptions = {},
): Promise<ZeroTestSocket> {
  const group = options.group ?? `g${Math.random().toString(36).slice(2)}`;
  const clientID = options.clientID ?? "c1";
  const query = `clientID=${clientID}&clientGroupID=${group}&baseCookie=${options.cookie ?? ""}&lmid=${options.lmid ?? 0}&wsid=w1`;
  const ws = new WebSocket(
    `${url.replace("http", "ws")}/${ns}/sync/v${options.version ?? 51}/connect?${query}`,
    options.protocol ??
      zeroSecProtocol(["initConnection", { desiredQueriesPatch: [] }], options.user ?? "alice"),
  );
  const messages: unknown[][] = [];
  const waiters: Array<() => void> = [];
  ws.on("message", (data) => {
    messages.push(JSON.parse(data.toString()) as unknown[]);
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const next = async (type: string): Promise<unknown> => {
    for (;;) {
      const found = messages.find((message) => message[0] === type);
      if (found) return found[1];
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return new Promise((resolve, reject) => {
    ws.on("open", () => resolve({ ws, messages, next, closed }));
    ws.on("error", reject);
  });
}

/** A push frame of one createTodo mutation of `clientID` in `group`. */
export function customPushFrame(group: string, id: number, args: unknown, clientID = "c1"): string {
  return JSON.stringify([
    "push",
    {
      clientGroupID: group,
      mutations: [{ type: "custom", id, clientID, name: "createTodo", args: [args], timestamp: 1 }],
      pushVersion: 1,
      timestamp: 1,
      requestID: `r${id}`,
    },
  ]);
}

/** The bodies of the pokePart messages the socket received. */
export function pokePartsOf(socket: ZeroTestSocket): Record<string, unknown>[] {
  return socket.messages.filter((m) => m[0] === "pokePart").map((m) => m[1] as Record<string, unknown>);
}

/** Waits for `check` to hold, polling; fails after `ms`. */
export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > ms) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
