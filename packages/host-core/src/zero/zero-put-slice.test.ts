import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { testService } from "../../test/test-host.js";
import { config, connectAlice, push, recorder, settle } from "../../test/zero-hub-fixtures.js";
import { PutSlice } from "../flows/put-slice.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { ZeroHub } from "./zero-hub.js";

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

type Op = { op: "put"; hash: string; name: string; args: unknown[] } | { op: "del"; hash: string };

const TODOS = ["a1", "a2", "a3", "a4", "a5", "a6"];

/** A put or del of one of the todo queries (each todo alone, or all of them). */
const queryOp: fc.Arbitrary<Op> = fc.oneof(
  fc
    .constantFrom(...TODOS)
    .map((id): Op => ({ op: "put", hash: `o-${id}`, name: "oneTodo", args: [{ id }] })),
  fc.constantFrom(...TODOS).map((id): Op => ({ op: "del", hash: `o-${id}` })),
  fc.constant<Op>({ op: "put", hash: "all", name: "allTodos", args: [] }),
  fc.constant<Op>({ op: "del", hash: "all" }),
);

/**
 * Waits until every frame the connection received was handled and its pokes sent. Frames are
 * handled in order, with turns of the event loop between them on a busy machine: the pong of a
 * ping sent last says every frame before it was handled.
 */
async function untilHandled(
  connection: { receive(frame: string): void },
  socket: { frames: unknown[][] },
): Promise<void> {
  connection.receive(JSON.stringify(["ping", {}]));
  while (!socket.frames.some(([type]) => type === "pong")) await settle();
  for (let seen = -1; seen !== socket.frames.length; ) {
    seen = socket.frames.length;
    await settle();
  }
}

/** What the client holds after the frames: its rows and its got queries. */
async function clientAfter(frames: Op[][], slice: PutSlice) {
  const { service } = await testService(config);
  services.push(service);
  for (const [i, id] of TODOS.entries()) push(service, "alice", i + 1, id);
  const hub = new ZeroHub(
    service.contexts.zero,
    { log() {} },
    () => Promise.reject(new Error("unused")),
    () => {},
    slice,
  );
  const socket = recorder();
  const connection = connectAlice(hub, socket, { baseCookie: null, wsid: "w1", queries: [] });
  await settle();
  // Frames read together: their changes are applied by pokes of the slice's size.
  for (const ops of frames)
    connection.receive(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: ops }]));
  await untilHandled(connection, socket);
  const rows = new Map<string, unknown>();
  const got = new Set<string>();
  for (const [type, body] of socket.frames) {
    if (type !== "pokePart") continue;
    const part = body as {
      rowsPatch?: Array<{ op: string; tableName?: string; value?: { id: string }; id?: { id: string } }>;
      gotQueriesPatch?: Array<{ op: string; hash?: string }>;
    };
    for (const op of part.gotQueriesPatch ?? []) {
      if (op.op === "clear") got.clear();
      else if (op.op === "put") got.add(op.hash!);
      else got.delete(op.hash!);
    }
    for (const op of part.rowsPatch ?? []) {
      if (op.op === "clear") rows.clear();
      else if (op.op === "put") rows.set(op.value!.id, op.value);
      else rows.delete(op.id!.id);
    }
  }
  return { rows: [...rows.entries()].sort(), got: [...got].sort() };
}

describe("PutSlice", () => {
  it("sizes a slice to what the last poke took, between 1 and the most", () => {
    const slice = new PutSlice(32, 10);
    expect(slice.size).toBe(32);
    slice.took(32, 80);
    expect(slice.size).toBe(4);
    slice.took(4, 1);
    expect(slice.size).toBe(32);
    slice.took(1, 500);
    expect(slice.size).toBe(1);
    slice.took(0, 500);
    expect(slice.size).toBe(1);
  });

  it("sizes a namespace's pokes to its querySliceMs", async () => {
    /** The pokes that apply one frame of 64 new queries, in a namespace with this target. */
    const pokesFor = async (querySliceMs: number) => {
      const { service } = await testService({ ...config, querySliceMs });
      services.push(service);
      for (const [i, id] of TODOS.entries()) push(service, "alice", i + 1, id);
      const socket = recorder();
      const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1", queries: [] });
      await settle();
      const before = socket.frames.filter(([type]) => type === "pokeStart").length;
      const ops = Array.from({ length: 64 }, (_, i) => ({
        op: "put",
        hash: `q${i}`,
        name: "oneTodo",
        args: [{ id: TODOS[i % TODOS.length] }],
      }));
      connection.receive(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: ops }]));
      await untilHandled(connection, socket);
      return socket.frames.filter(([type]) => type === "pokeStart").length - before;
    };
    // A target no poke reaches keeps each at its most (32 new queries): two pokes.
    expect(await pokesFor(60_000)).toBe(2);
    // A target of 1 ms: 32 new queries take longer than that, so the next pokes take fewer.
    expect(await pokesFor(1)).toBeGreaterThan(2);
  });

  it("changes how a flood of query changes is grouped into pokes, never what the client ends with", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(queryOp, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 2, max: 31 }),
        async (frames, size) => {
          // An infinite target keeps each slice at its most: 1, `size`, or 32 new queries a poke.
          const one = await clientAfter(frames, new PutSlice(1, Number.POSITIVE_INFINITY));
          const some = await clientAfter(frames, new PutSlice(size, Number.POSITIVE_INFINITY));
          const all = await clientAfter(frames, new PutSlice(32, Number.POSITIVE_INFINITY));
          expect(one).toEqual(all);
          expect(some).toEqual(all);
        },
      ),
      { numRuns: 25 },
    );
  });
});
