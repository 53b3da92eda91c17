import type { Schema } from "@weir/engine-wasm";
import type { QueryDefinition } from "@weir/host-core";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type NodeHostOptions } from "./index.js";

// A query-aware answer is bounded by `queryAnswerMs`: past it a large answer is cut between pages
// of rows, and a reset leaves its further queries to the next pulls. With 0, every answer is one
// page or one query: a client pulling until unchanged still ends with every row, and hears of its
// mutation only with the last part.

const schema: Schema = {
  tables: { item: { columns: { id: "string", kind: "string" }, primaryKey: ["id"] } },
};

const KINDS = ["a", "b", "c"];
const ITEMS = 1_800;

const queries: Record<string, QueryDefinition> = {
  ofKind: (args) => ({
    table: "item",
    orderBy: [["id", "asc"]],
    where: {
      type: "simple",
      op: "=",
      left: { type: "column", name: "kind" },
      right: { type: "literal", value: (args as string[])[0] },
    },
  }),
  /** The first 2,500 items of a kind by id: a window of more rows than a page reads (2,048). */
  firstOfKind: (args) => ({
    table: "item",
    orderBy: [["id", "asc"]],
    limit: 2500,
    where: {
      type: "simple",
      op: "=",
      left: { type: "column", name: "kind" },
      right: { type: "literal", value: (args as string[])[0] },
    },
  }),
};

const mutators = {
  /** `items` items, of kinds a, b and c in turn. */
  seed(tx: { exec(sql: string, params?: unknown[]): number }, args: { items: number }) {
    tx.exec(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%06d', i), char(97 + i % 3) FROM n",
      [args.items],
    );
  },
  /** Moves the item `id` to `kind`. */
  move(tx: { exec(sql: string, params?: unknown[]): number }, args: { id: string; kind: string }) {
    tx.exec("UPDATE item SET kind = ? WHERE id = ?", [args.kind, args.id]);
  },
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function start(options: Partial<NodeHostOptions>) {
  const server = createServer({
    schema,
    mutators: mutators as unknown as NodeHostOptions["mutators"],
    queries,
    devAuth: true,
    dataDir: tempDir(),
    logger: memoryLogger(),
    ...options,
  });
  const { url } = await server.listen();
  closers.push(() => server.close());
  return url;
}

interface Answer {
  cookie: number;
  unchanged?: boolean;
  gotQueries?: string[];
  lastMutationIDChanges?: Record<string, number>;
  rowsPatch?: Array<{ op: string; value?: { id: string } }>;
}

async function post(url: string, path: string, body: unknown) {
  const response = await fetch(`${url}/ns/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "ann" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
}

/** A client of group `g` pulling from no cookie until unchanged: its answers and the rows it holds. */
async function syncFromNothing(url: string, patch: unknown[] = []) {
  const answers: Answer[] = [];
  const rows = new Set<string>();
  let cookie: number | null = null;
  for (let pulls = 0; pulls < 200; pulls++) {
    const answer = await post(url, "pull", {
      clientGroupID: "g",
      clientID: "g-c",
      cookie,
      queries: { patch },
    });
    if (answer.unchanged) return { answers, rows };
    patch = [];
    answers.push(answer);
    cookie = answer.cookie;
    for (const op of answer.rowsPatch ?? []) {
      if (op.op === "clear") rows.clear();
      else if (op.op === "put") rows.add(op.value!.id);
    }
  }
  throw new Error("never unchanged");
}

describe("a query-aware answer bounded by queryAnswerMs", () => {
  it.each([
    { answer: "no time (0)", queryAnswerMs: 0, parts: true },
    { answer: "time enough (a minute)", queryAnswerMs: 60_000, parts: false },
  ])(
    "answers a reset of three queries over HTTP ($answer), and the client ends with every row",
    async ({ queryAnswerMs, parts }) => {
      const url = await start({ queryAnswerMs });
      const pushed = await post(url, "push", {
        clientGroupID: "g",
        pushVersion: 1,
        mutations: [
          { type: "custom", id: 1, clientID: "g-c", name: "seed", args: [{ items: ITEMS }], timestamp: 1 },
        ],
      });
      expect(pushed).toBeDefined();
      const puts = KINDS.map((kind) => ({ op: "put", hash: `kind-${kind}`, name: "ofKind", args: [kind] }));
      const first = await syncFromNothing(url, puts);
      expect(first.rows.size).toBe(ITEMS);
      // The client starts over (its storage was cleared): a reset of every query the group holds.
      const again = await syncFromNothing(url);
      expect(again.rows.size).toBe(ITEMS);
      const last = again.answers.at(-1)!;
      expect(last.gotQueries).toEqual(["kind-a", "kind-b", "kind-c"]);
      expect(last.lastMutationIDChanges).toEqual({ "g-c": 1 });
      if (parts) {
        // One query a part, each part's rows a page at a time: many answers, the first naming one query
        // and no mutation id.
        expect(again.answers.length).toBeGreaterThan(KINDS.length);
        expect(again.answers[0]!.gotQueries).toEqual(["kind-a"]);
        expect(again.answers[0]!.lastMutationIDChanges).toEqual({});
      } else {
        expect(again.answers.length).toBe(1);
      }
    },
  );

  it("answers a patch of more queries than a step takes in parts past the answer's time, and the client ends with all", async () => {
    const url = await start({ queryAnswerMs: 0, querySliceMs: 1 });
    await post(url, "push", {
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [
        { type: "custom", id: 1, clientID: "g-c", name: "seed", args: [{ items: ITEMS }], timestamp: 1 },
      ],
    });
    // 40 queries (a step takes at most 32), each of a third of the items.
    const puts = Array.from({ length: 40 }, (_, i) => ({
      op: "put",
      hash: `q${i}`,
      name: "ofKind",
      args: [KINDS[i % KINDS.length]],
    }));
    const synced = await syncFromNothing(url, puts);
    expect(synced.rows.size).toBe(ITEMS);
    expect(synced.answers.length).toBeGreaterThan(1);
    expect(synced.answers[0]!.gotQueries!.length).toBeLessThan(puts.length);
    expect([...synced.answers.at(-1)!.gotQueries!].sort()).toEqual(puts.map((put) => put.hash).sort());
    expect(synced.answers.at(-1)!.lastMutationIDChanges).toEqual({ "g-c": 1 });
  });

  it("keeps windows of thousands of rows up to date after a write in one answer, with no time", async () => {
    const url = await start({ queryAnswerMs: 0 });
    const push = (id: number, name: string, args: unknown) =>
      post(url, "push", {
        clientGroupID: "g",
        pushVersion: 1,
        mutations: [{ type: "custom", id, clientID: "g-c", name, args: [args], timestamp: id }],
      });
    await push(1, "seed", { items: 9_000 });
    // Three windows of 2,500 of their kind's 3,000 items, read in pages, in parts.
    const puts = KINDS.map((kind) => ({
      op: "put",
      hash: `first-${kind}`,
      name: "firstOfKind",
      args: [kind],
    }));
    const rows = new Map<string, string>();
    let cookie: number | null = null;
    const pull = async (patch: unknown[] = []) => {
      const answer = await post(url, "pull", {
        clientGroupID: "g",
        clientID: "g-c",
        cookie,
        queries: { patch },
      });
      cookie = answer.cookie;
      for (const op of (answer.rowsPatch ?? []) as Array<{
        op: string;
        value?: { id: string; kind: string };
        id?: { id: string };
      }>) {
        if (op.op === "clear") rows.clear();
        else if (op.op === "put") rows.set(op.value!.id, op.value!.kind);
        else rows.delete(op.id!.id);
      }
      return answer;
    };
    let parts = 0;
    for (let answer = await pull(puts); !answer.unchanged; answer = await pull()) parts++;
    expect(parts).toBeGreaterThan(KINDS.length);
    expect(rows.size).toBe(3 * 2500);
    // An item of kind a's window moves to kind b, before b's window ends: a reads on one row past
    // its last, b lets go of its last.
    await push(2, "move", { id: "i000000", kind: "b" });
    const answer = await pull();
    expect(answer.gotQueries).toEqual(puts.map((put) => put.hash));
    expect(answer.lastMutationIDChanges).toEqual({ "g-c": 2 });
    expect((await pull()).unchanged).toBe(true);
    const expected = new Map<string, string>();
    for (const [kind, ids] of [
      ["a", Array.from({ length: 2500 }, (_, i) => 3 * (i + 1))],
      ["b", [0, ...Array.from({ length: 2499 }, (_, i) => 3 * i + 1)]],
      ["c", Array.from({ length: 2500 }, (_, i) => 3 * i + 2)],
    ] as const) {
      for (const i of ids) expected.set(`i${String(i).padStart(6, "0")}`, kind);
    }
    expect(rows).toEqual(expected);
  });

  it("refuses a negative queryAnswerMs", () => {
    const options = {
      schema,
      mutators: mutators as unknown as NodeHostOptions["mutators"],
      queries,
      devAuth: true as const,
      queryAnswerMs: -1,
      logger: memoryLogger(),
    };
    expect(() => createServer(options)).toThrow(/queryAnswerMs/);
  });
});
