import {
  conformanceConfig,
  type SuiteApp,
  type SuiteUpstream,
  startSuiteApp,
  startSuiteUpstream,
} from "@weir/conformance";
import { createServer } from "@weir/node-host";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorkerd, startEdgeWorkerd } from "../test/edge-workerd.js";
import {
  localTodos,
  mutators,
  queries,
  rowsOf,
  sockets,
  type TodoZero,
  zeroClient,
} from "../test/zero-client.js";
import { eventually, type Todo } from "../test/zero-client-suite.js";
import { serverQueries } from "./server-queries.js";

// The stock Zero client where the namespace delegates its pushes to the app's own server
// (`mutate`): the conformance suite's app, whose mutators write its SQLite database, which weir
// ingests as its upstream. Namespaces named `dp-*` delegate. On weir's Node host, and on the
// edge host in real workerd (the Durable Object calls the app and ingests its rows), each in a
// namespace of its own, so that the app keeps their rows apart.

let upstream: SuiteUpstream;
let app: SuiteApp;
let server: ReturnType<typeof createServer>;
let workerd: EdgeWorkerd;
const bases: Record<string, string> = {};
const clients: TodoZero[] = [];

beforeAll(async () => {
  upstream = await startSuiteUpstream();
  app = await startSuiteApp(upstream);
  server = createServer({
    ...conformanceConfig({ upstreamUrl: upstream.url, appUrl: app.url }),
    queries: serverQueries,
    devAuth: true,
    storage: "memory",
    logger: { log: () => {} },
  });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  bases.node = `${url.replace(/\/$/, "")}/dp-zero-node`;
  workerd = await startEdgeWorkerd({ bindings: { UPSTREAM_URL: upstream.url, APP_URL: app.url } });
  bases.edge = `${workerd.url}/dp-zero-edge`;
});

afterAll(async () => {
  await server?.close();
  await workerd?.dispose();
  await app?.close();
  await upstream?.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

let keys = 0;
function client(host: string, user: string): TodoZero {
  const z = zeroClient(bases[host]!, user, { storageKey: `dp${++keys}` });
  clients.push(z);
  return z;
}

function create(z: TodoZero, id: string, text: string) {
  // The app's createTodo writes sort 0 whatever the client says: a row with sort 0 came from the app.
  return z.mutate(mutators.createTodo({ id, text, done: false, sort: 7 }));
}

describe.each(["node", "edge"])(
  "the stock Zero client with pushes delegated to the app's server (%s)",
  (host) => {
    it("confirms a mutation once the app applied it and weir ingested its rows", async () => {
      const z = client(host, "alice");
      const view = z.materialize(queries.allTodos());
      await rowsOf<Todo>(z, queries.allTodos(), () => true);
      const calls = app.calls.length;
      expect(await create(z, "d1", "through the app").server).toEqual({ type: "success" });
      expect(app.calls.slice(calls)).toEqual([
        { namespace: `dp-zero-${host}`, authorization: "Bearer alice", mutationIDs: [1] },
      ]);
      // Effects before acknowledgement: when `.server` succeeds, the client already holds the row
      // as the app wrote it (the poke that confirms the id carries it), not its own optimistic guess.
      expect((await localTodos<Todo>(z)).find((row) => row.id === "d1")).toMatchObject({
        owner: "alice",
        text: "through the app",
        sort: 0,
      });
      view.destroy();
      const other = client(host, "alice");
      const rows = await rowsOf<Todo>(other, queries.allTodos(), (rows) =>
        rows.some((row) => row.id === "d1"),
      );
      expect(rows.find((row) => row.id === "d1")).toMatchObject({ sort: 0 });
    });

    it("answers the app's refusal of a mutation as that mutation's app error, and rolls it back", async () => {
      const alice = client(host, "alice");
      expect(await create(alice, "d2", "mine").server).toEqual({ type: "success" });
      // Bob cannot see Alice's todo, so his client inserts it; the app refuses the duplicate id.
      const bob = client(host, "bob");
      await rowsOf<Todo>(bob, queries.allTodos(), () => true);
      const result = create(bob, "d2", "taken");
      await result.client;
      expect(await result.server).toMatchObject({
        type: "error",
        error: { type: "app", message: expect.stringContaining("UNIQUE constraint failed") },
      });
      await eventually(async () =>
        expect((await localTodos<Todo>(bob)).map((row) => row.id)).not.toContain("d2"),
      );
      // The refusal advanced Bob's id: his next mutation goes through.
      expect(await create(bob, "d3", "bob's own").server).toEqual({ type: "success" });
    });

    it("answers an app it cannot reach with PushFailed, records nothing, and pushes again once reconnected", async () => {
      const z = client(host, "carol");
      await rowsOf<Todo>(z, queries.allTodos(), () => true);
      const calls = app.calls.length;
      // Every attempt of the push finds the app's socket closed.
      app.misbehave.push({ kind: "down" }, { kind: "down" }, { kind: "down" });
      const result = await create(z, "d4", "while the app is down").server;
      expect(result).toMatchObject({ type: "error", error: { type: "zero" } });
      expect(app.calls.length - calls).toBe(3);
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(socket.received.find((frame) => frame[0] === "error")?.[1]).toEqual({
        kind: "PushFailed",
        origin: "zeroCache",
        reason: "internal",
        message: expect.stringMatching(/^app_unavailable: /),
        mutationIDs: [{ clientID: z.clientID, id: 1 }],
      });
      expect(z.connection.state.current.name).toBe("error");
      const watcher = client(host, "carol");
      expect(
        (await rowsOf<Todo>(watcher, queries.allTodos(), () => true)).map((row) => row.id),
      ).not.toContain("d4");

      // The app is back: reconnected, the client pushes the mutation it kept, and it is confirmed.
      await z.connection.connect();
      const rows = await rowsOf<Todo>(watcher, queries.allTodos(), (rows) =>
        rows.some((row) => row.id === "d4"),
      );
      expect(rows.find((row) => row.id === "d4")).toMatchObject({ owner: "carol", sort: 0 });
    });

    it("passes an app's 401 on to the client as PushFailed with its status, and the client asks for a new credential", async () => {
      const z = client(host, "dave");
      await rowsOf<Todo>(z, queries.allTodos(), () => true);
      app.misbehave.push({
        kind: "answer",
        status: 401,
        body: { error: "unauthorized", message: "token expired" },
      });
      // The mutation waits (a client that needs auth keeps its mutations for the new credential).
      void create(z, "d5", "with an old token");
      await eventually(async () => expect(z.connection.state.current.name).toBe("needs-auth"));
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(socket.received.find((frame) => frame[0] === "error")?.[1]).toMatchObject({
        kind: "PushFailed",
        origin: "zeroCache",
        reason: "http",
        status: 401,
        bodyPreview: expect.stringContaining("token expired"),
        mutationIDs: [{ clientID: z.clientID, id: 1 }],
      });
      expect(z.connection.state.current).toMatchObject({
        name: "needs-auth",
        reason: { type: "mutate", status: 401 },
      });
    });

    it("passes the app's own PushFailed on with its reason", async () => {
      const z = client(host, "erin");
      await rowsOf<Todo>(z, queries.allTodos(), () => true);
      const failed = {
        kind: "PushFailed",
        origin: "server",
        reason: "database",
        message: "the app's database is read-only",
        mutationIDs: [{ clientID: z.clientID, id: 1 }],
      };
      app.misbehave.push({ kind: "answer", status: 200, body: { pushResponse: failed } });
      expect(await create(z, "d6", "into a read-only app").server).toMatchObject({
        type: "error",
        error: { type: "zero" },
      });
      const socket = sockets.findLast((s) => s.connectURL.searchParams.get("clientID") === z.clientID)!;
      expect(socket.received.find((frame) => frame[0] === "error")?.[1]).toEqual(failed);
    });
  },
);
