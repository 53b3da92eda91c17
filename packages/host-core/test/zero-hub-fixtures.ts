// What the Zero hub's tests share: a todo namespace's config, a socket that records its frames,
// a native push, readers of the frames, and Alice's client connecting.

import { ZERO_DOWNSTREAM_BODIES } from "@weir/protocol";
import * as v from "valibot";
import type { WeirConfig } from "../src/config/weir-config.js";
import type { NamespaceService } from "../src/namespace/namespace-service.js";
import type { ZeroConnectionState } from "../src/zero/zero-connection-state.js";
import type { ZeroHub } from "../src/zero/zero-hub.js";
import type { ZeroSocket } from "../src/zero/zero-socket.js";
import { headerUser } from "./test-host.js";

export const config: WeirConfig = {
  schema: { tables: { todo: { columns: { id: "string", owner: "string" }, primaryKey: ["id"] } } },
  mutators: {
    createTodo(tx, args) {
      tx.insert("todo", { id: (args as { id: string }).id, owner: tx.claims.userID });
    },
  },
  queries: {
    allTodos: () => ({ table: "todo" }),
    oneTodo: (args) => ({
      table: "todo",
      where: {
        type: "simple",
        op: "=",
        left: { type: "column", name: "id" },
        right: { type: "literal", value: (args as { id: string }).id },
      },
    }),
  },
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  authenticate: headerUser,
};

/**
 * A frame weir sent, checked against Zero's wire as `@weir/protocol` declares it: a message of
 * another type or shape fails the test that sent it.
 */
function downstream(frame: string): unknown[] {
  const message = JSON.parse(frame) as unknown[];
  const type = String(message[0]);
  if (message.length !== 2 || !Object.hasOwn(ZERO_DOWNSTREAM_BODIES, type)) {
    throw new Error(`not a Zero message: ${frame.slice(0, 200)}`);
  }
  const body = v.safeParse(ZERO_DOWNSTREAM_BODIES[type as keyof typeof ZERO_DOWNSTREAM_BODIES], message[1]);
  if (!body.success) throw new Error(`${type} off the wire: ${v.summarize(body.issues)}`);
  return message;
}

/** A socket recording what is sent on it and the state it was last asked to keep. */
export function recorder(): ZeroSocket & { frames: unknown[][]; saved: ZeroConnectionState | null } {
  const socket = {
    frames: [] as unknown[][],
    saved: null as ZeroConnectionState | null,
    send: (frame: string) => socket.frames.push(downstream(frame)),
    close: () => {},
    save: (state: ZeroConnectionState) => {
      socket.saved = state;
    },
  };
  return socket;
}

/** One mutation: its push's one slice commits before this returns. */
export function push(service: NamespaceService, user: string, id: number, todo: string): void {
  void service.push(
    "native",
    {
      clientGroupID: `native-${user}`,
      pushVersion: 1,
      mutations: [{ type: "custom", id, clientID: `n-${user}`, name: "createTodo", args: [{ id: todo }] }],
    },
    { userID: user },
  );
}

// Two turns of the event loop: a change of queries is poked in a macrotask after its frame.
export const settle = () =>
  new Promise((resolve) => setTimeout(resolve, 0)).then(
    () => new Promise((resolve) => setTimeout(resolve, 0)),
  );
export const ends = (frames: unknown[][]) => frames.filter((f) => f[0] === "pokeEnd");
export const cookieOf = (socket: { frames: unknown[][] }) =>
  (ends(socket.frames).at(-1)![1] as { cookie: string }).cookie;
/** The entries of one patch of every poke part on the socket, in order. */
export const patchesOf = (frames: unknown[][], patch: "rowsPatch" | "mutationsPatch") =>
  frames
    .filter((f) => f[0] === "pokePart")
    .flatMap((f) => ((f[1] as Record<string, unknown[] | undefined>)[patch] ?? []) as Array<{ op: string }>);

/**
 * Alice's client connects to group g1 on `hub`. A client new to the group (no cookie) desires
 * all todos unless told otherwise; one back with a cookie desires what it did, which the server
 * knows: no patch.
 */
export function connectAlice(
  hub: ZeroHub,
  socket: ZeroSocket,
  options: {
    clientID?: string;
    baseCookie: string | null;
    wsid: string;
    queries?: Array<Record<string, unknown>>;
  },
) {
  const { clientID = "c1", baseCookie, wsid } = options;
  const queries =
    options.queries ?? (baseCookie === null ? [{ op: "put", hash: "all", name: "allTodos", args: [] }] : []);
  return hub.connect(
    {
      clientID,
      clientGroupID: "g1",
      baseCookie,
      lmid: 0,
      wsid,
      init: { desiredQueriesPatch: queries as never },
      authToken: "alice",
      protocol: null,
    },
    { userID: "alice" },
    socket,
  );
}
