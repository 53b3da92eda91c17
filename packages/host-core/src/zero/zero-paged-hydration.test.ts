import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { headerUser, testService } from "../../test/test-host.js";
import { connectAlice, patchesOf, recorder, settle } from "../../test/zero-hub-fixtures.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { NamespaceService } from "../namespace/namespace-service.js";

const config: WeirConfig = {
  schema: {
    tables: {
      item: { columns: { id: "string" }, primaryKey: ["id"] },
      tag: { columns: { id: "string", itemId: "string", label: "string" }, primaryKey: ["id"] },
    },
  },
  mutators: {
    add(tx, args) {
      const { id, label } = args as { id: string; label: string };
      tx.upsert("item", { id });
      tx.upsert("tag", { id: `t-${id}`, itemId: id, label });
    },
  },
  authenticate: headerUser,
  queries: {
    // Its root's condition holds an EXISTS: the root is read in pages.
    tagged: (args) => ({
      table: "item",
      orderBy: [["id", "asc"]],
      ...((args as { limit?: number }).limit ? { limit: (args as { limit: number }).limit } : {}),
      where: {
        type: "correlatedSubquery",
        op: "EXISTS",
        related: {
          correlation: { parentField: ["id"], childField: ["itemId"] },
          subquery: {
            table: "tag",
            where: {
              type: "simple",
              op: "=",
              left: { type: "column", name: "label" },
              right: { type: "literal", value: (args as { label: string }).label },
            },
          },
        },
      },
    }),
  },
};

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

/**
 * A Zero client's rows after it desired `queries` over items labelled `labels`, with the server's
 * `queryPageMs`; and whether a timer set after its frame ran before the first poke.
 */
async function hydrate(
  labels: readonly string[],
  queries: ReadonlyArray<{ label: string; limit?: number }>,
  queryPageMs: number,
) {
  // No answer time: a poke the machine's load slowed past it would leave queries for later
  // pokes, which this test does not wait for (it compares pages with one run, not paces).
  const { service } = await testService({ ...config, queryPageMs, queryAnswerMs: 60_000 });
  services.push(service);
  const mutations = labels.map((label, i) => ({
    type: "custom",
    clientID: "w-c",
    id: i + 1,
    name: "add",
    args: [{ id: `i${String(i).padStart(3, "0")}`, label }],
  }));
  if (mutations.length > 0)
    await service.push("native", { clientGroupID: "w", pushVersion: 1, mutations }, { userID: "alice" });
  const socket = recorder();
  const order: string[] = [];
  const sent = socket.send;
  socket.send = (frame: string) => {
    order.push(JSON.parse(frame)[0]);
    sent(frame);
  };
  const connection = connectAlice(service.zero, socket, { baseCookie: null, wsid: "w1", queries: [] });
  await settle();
  order.length = 0;
  const patch = queries.map((args, i) => ({ op: "put", hash: `q${i}`, name: "tagged", args: [args] }));
  connection.receive(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: patch }]));
  // Past the frame's own turn (its poke is a macrotask after it): runs before a poke that is
  // stopped between pages, after one that is not.
  setTimeout(() => setTimeout(() => order.push("another task"), 0), 0);
  for (let turns = 0; turns < 5000 && !order.includes("pokeEnd"); turns++) await settle();
  const rows = new Map<string, unknown>();
  for (const op of patchesOf(socket.frames, "rowsPatch") as Array<{
    op: string;
    tableName?: string;
    id?: { id: string };
    value?: { id: string };
  }>) {
    if (op.op === "clear") rows.clear();
    else if (op.op === "put") rows.set(`${op.tableName}/${op.value!.id}`, op.value);
    else if (op.op === "del") rows.delete(`${op.tableName}/${op.id!.id}`);
  }
  const got = socket.frames
    .filter((f) => f[0] === "pokePart")
    .flatMap((f) => (f[1] as { gotQueriesPatch?: Array<{ hash: string }> }).gotQueriesPatch ?? [])
    .map((op) => op.hash);
  return {
    rows: [...rows.keys()].sort(),
    got: [...new Set(got)].sort(),
    errors: socket.frames.filter((f) => f[0] === "error" || f[0] === "transformError"),
    turnFirst: order.indexOf("another task") < order.indexOf("pokeStart"),
  };
}

describe("a Zero client's EXISTS query, hydrated in pages", () => {
  it("gives the event loop turns between its pages, and the rows one run gives", async () => {
    const labels = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? "even" : "odd"));
    const paged = await hydrate(labels, [{ label: "even" }], 0);
    const whole = await hydrate(labels, [{ label: "even" }], 60_000);
    expect(paged.turnFirst).toBe(true);
    expect(whole.turnFirst).toBe(false);
    expect(paged.errors).toEqual([]);
    expect(paged.got).toEqual(["q0"]);
    expect(paged.rows).toEqual(whole.rows);
    expect(paged.rows.filter((row) => row.startsWith("item/"))).toHaveLength(20);
  });

  it("answers what one run answers, for any items and queries", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "b", "c"), { maxLength: 30 }),
        fc.array(
          fc.record({
            label: fc.constantFrom("a", "b", "z"),
            limit: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        async (labels, queries) => {
          const args = queries.map((q) => (q.limit === undefined ? { label: q.label } : q));
          const paged = await hydrate(labels, args, 0);
          const whole = await hydrate(labels, args, 60_000);
          expect(paged.errors).toEqual([]);
          expect(paged.rows).toEqual(whole.rows);
          expect(paged.got).toEqual(whole.got);
        },
      ),
      { numRuns: 15 },
    );
  });
});
