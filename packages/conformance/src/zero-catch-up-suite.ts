import { expect, it } from "vitest";
import type { ConformanceTarget } from "./target.js";
import {
  connectZero,
  pokePartsOf,
  until,
  type ZeroTestSocket,
  zeroSecProtocol,
} from "./zero-socket-client.js";

type RowOp = {
  op: string;
  tableName?: string;
  value?: Record<string, unknown> & { id: string };
  id?: { id: string };
};

/** The todos a Zero client holds after applying a socket's poke parts in order (from `into`). */
function applyTodos(parts: Record<string, unknown>[], into = new Map<string, string>()): Map<string, string> {
  for (const part of parts) {
    for (const op of (part.rowsPatch as RowOp[] | undefined) ?? []) {
      if (op.op === "clear") into.clear();
      else if (op.tableName !== "todo") continue;
      else if (op.op === "put") into.set(op.value!.id, JSON.stringify(op.value));
      else if (op.op === "del") into.delete(op.id!.id);
    }
  }
  return into;
}

/** The todo ids a socket's poke parts put or delete. */
function touchedIds(parts: Record<string, unknown>[]): string[] {
  const ids = new Set<string>();
  for (const part of parts) {
    for (const op of (part.rowsPatch as RowOp[] | undefined) ?? []) {
      if (op.op === "put") ids.add(op.value!.id);
      else if (op.op === "del") ids.add(op.id!.id);
    }
  }
  return [...ids].sort();
}

function cookies(socket: ZeroTestSocket): string[] {
  return socket.messages.filter((m) => m[0] === "pokeEnd").map((m) => (m[1] as { cookie: string }).cookie);
}

/** The parts of the pokes a socket received up to and including the one that ended at `cookie`. */
function partsUpTo(socket: ZeroTestSocket, cookie: string): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  for (const [type, body] of socket.messages) {
    if (type === "pokePart") parts.push(body as Record<string, unknown>);
    if (type === "pokeEnd" && (body as { cookie: string }).cookie === cookie) break;
  }
  return parts;
}

/** Done todos, and the caller's first two by sort order: rows move in and out of the second without changing. */
const QUERIES = [
  { op: "put", hash: "qdone", name: "doneTodos", args: [] },
  { op: "put", hash: "qfirst", name: "firstTodos", args: [{ limit: 2 }] },
];

/**
 * A client that misses pokes (its socket dropped as they went out, or the server restarted after
 * sending them) comes back with the cookie it had: it gets what changed since that cookie, not
 * every row again.
 */
export function zeroCatchUpSuite(current: () => ConformanceTarget): void {
  const connect = (ns: string, group: string, cookie?: string) =>
    connectZero(current().url, ns, {
      group,
      ...(cookie === undefined ? {} : { cookie }),
      protocol: zeroSecProtocol(["initConnection", { desiredQueriesPatch: QUERIES }], "alice"),
    });
  let writes = 0;
  const write = (writer: ZeroTestSocket, group: string, name: string, args: Record<string, unknown>) =>
    writer.ws.send(
      JSON.stringify([
        "push",
        {
          clientGroupID: group,
          mutations: [{ type: "custom", id: ++writes, clientID: "c1", name, args: [args], timestamp: 1 }],
          pushVersion: 1,
          timestamp: 1,
          requestID: `r${writes}`,
        },
      ]),
    );

  /**
   * Seeds todos k0 (done, never touched again), k1 (done) and k2 (first two by sort), connects the
   * reader with both queries, then writes three times, one poke each, as another device of the
   * same user: m1 sorts first (k2 leaves the first two, unchanged), m2 is done, k1 is no longer
   * done. Answers the reader's cookie before the three pokes and the namespace.
   */
  async function missThreePokes(
    ns: string,
    group: string,
  ): Promise<{ before: string; reader: ZeroTestSocket; writer: ZeroTestSocket }> {
    const writerGroup = `${group}-writer`;
    writes = 0;
    const writer = await connectZero(current().url, ns, { group: writerGroup });
    await writer.next("pokeEnd");
    const acked = async (n: number) =>
      until(() =>
        writer.messages.some(
          (m) =>
            m[0] === "pokePart" &&
            ((m[1] as { lastMutationIDChanges?: Record<string, number> }).lastMutationIDChanges?.c1 ?? 0) >=
              n,
        ),
      );
    write(writer, writerGroup, "createTodo", { id: "k0", done: true, sort: 50 });
    write(writer, writerGroup, "createTodo", { id: "k1", done: true, sort: 10 });
    write(writer, writerGroup, "createTodo", { id: "k2", done: false, sort: 11 });
    await acked(3);
    const reader = await connect(ns, group);
    await until(() =>
      pokePartsOf(reader).some((part) => JSON.stringify(part.gotQueriesPatch ?? []).includes("qfirst")),
    );
    await until(() => cookies(reader).length >= 1);
    const before = cookies(reader).at(-1)!;
    expect([...applyTodos(pokePartsOf(reader)).keys()].sort()).toEqual(["k0", "k1", "k2"]);
    const steps: Array<[string, Record<string, unknown>]> = [
      ["createTodo", { id: "m1", done: false, sort: 1 }],
      ["createTodo", { id: "m2", done: true, sort: 30 }],
      ["updateTodo", { id: "k1", done: false, sort: 5 }],
    ];
    for (const [i, [name, args]] of steps.entries()) {
      const seen = cookies(reader).length;
      write(writer, writerGroup, name, args);
      await acked(4 + i);
      await until(() => cookies(reader).length > seen);
    }
    return { before, reader, writer };
  }

  /** The todos a new group of the same user holds, with the same queries. */
  async function fresh(ns: string): Promise<Map<string, string>> {
    const socket = await connect(ns, `fresh${Math.random().toString(36).slice(2)}`);
    await until(() =>
      pokePartsOf(socket).some((part) => JSON.stringify(part.gotQueriesPatch ?? []).includes("qfirst")),
    );
    await until(() => cookies(socket).length >= 1);
    const rows = applyTodos(pokePartsOf(socket));
    socket.ws.close();
    return rows;
  }

  /** Checks the reader back at `before` got only what changed since, and holds what a new group would. */
  async function expectCaughtUp(ns: string, group: string, before: string, held: Map<string, string>) {
    const again = await connect(ns, group, before);
    await again.next("pokeEnd");
    const parts = pokePartsOf(again);
    expect(again.messages.find((m) => m[0] === "pokeStart")![1]).toMatchObject({ baseCookie: before });
    expect(JSON.stringify(parts)).not.toContain('"clear"');
    // k0 did not change: the client has it. k2 left the first two: deleted.
    expect(touchedIds(parts)).toEqual(["k1", "k2", "m1", "m2"]);
    const rows = applyTodos(parts, held);
    expect(rows).toEqual(await fresh(ns));
    expect([...rows.keys()].sort()).toEqual(["k0", "k1", "m1", "m2"]);
    // Both queries complete again for the client.
    expect(JSON.stringify(parts.map((part) => part.gotQueriesPatch ?? []))).toMatch(
      /qdone[\s\S]*qfirst|qfirst[\s\S]*qdone/,
    );
    again.ws.close();
    await again.closed;
  }

  it("catches up a client three pokes behind its group's with only the rows that changed, not a reset", async () => {
    const ns = `zc1-${Date.now()}`;
    const group = "gbehind";
    const { before, reader, writer } = await missThreePokes(ns, group);
    const held = applyTodos(partsUpTo(reader, before));
    // The socket dropped as the three pokes went out: the client comes back with the cookie before them.
    reader.ws.close();
    await reader.closed;
    await expectCaughtUp(ns, group, before, held);
    writer.ws.close();
  });

  it("catches up a client behind its group's pokes after the host restarted, not a reset", async (context) => {
    const target = current();
    if (!target.restart) return context.skip();
    const ns = `zc2-${Date.now()}`;
    const group = "grestart";
    const { before, reader, writer } = await missThreePokes(ns, group);
    const held = applyTodos(partsUpTo(reader, before));
    reader.ws.close();
    writer.ws.close();
    await Promise.all([reader.closed, writer.closed]);
    await target.restart();
    await expectCaughtUp(ns, group, before, held);
  });

  it("catches up a client that missed its group's changes of queries: their rows, and the queries again", async () => {
    const ns = `zc3-${Date.now()}`;
    const group = "gqueries";
    const writer = await connectZero(current().url, ns, { group: `${group}-writer` });
    await writer.next("pokeEnd");
    writes = 0;
    write(writer, `${group}-writer`, "createTodo", { id: "d1", done: true, sort: 1 });
    write(writer, `${group}-writer`, "createTodo", { id: "o1", done: false, sort: 2 });
    await until(() =>
      writer.messages.some((m) => JSON.stringify(m).includes('"lastMutationIDChanges":{"c1":2}')),
    );
    const first = await connectZero(current().url, ns, { group });
    await first.next("pokeEnd");
    const stale = cookies(first).at(-1)!;
    for (const [i, query] of QUERIES.entries()) {
      first.ws.send(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: [query] }]));
      // Its poke ended (the part naming the query complete comes before the poke's end).
      await until(
        () =>
          cookies(first).length >= 2 + i &&
          pokePartsOf(first).some((part) => JSON.stringify(part.gotQueriesPatch ?? []).includes(query.hash)),
      );
    }
    first.ws.close();
    await first.closed;
    const again = await connectZero(current().url, ns, { group, cookie: stale });
    await again.next("pokeEnd");
    const parts = pokePartsOf(again);
    expect(JSON.stringify(parts)).not.toContain('"clear"');
    expect([...applyTodos(parts).keys()].sort()).toEqual(["d1", "o1"]);
    const got = JSON.stringify(parts.map((part) => part.gotQueriesPatch ?? []));
    expect(got).toContain('"qdone"');
    expect(got).toContain('"qfirst"');
    expect(JSON.stringify(parts.map((part) => part.desiredQueriesPatches ?? {}))).toContain('"qfirst"');
    again.ws.close();
    writer.ws.close();
  });
}
