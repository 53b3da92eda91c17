import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { headerUser, send, testHost, testService } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";
import type { NamespaceService } from "../namespace/namespace-service.js";
import { runSlicedPull } from "./sliced-pull.js";

const equals = (column: string, value: unknown) => ({
  type: "simple",
  op: "=",
  left: { type: "column", name: column },
  right: { type: "literal", value },
});

const config: WeirConfig = {
  schema: { tables: { item: { columns: { id: "string", n: "integer" }, primaryKey: ["id"] } } },
  mutators: {
    set(tx, args) {
      const { id, n } = args as { id: string; n: number | null };
      if (n === null) tx.delete("item", { id });
      else tx.upsert("item", { id, n });
    },
  },
  authenticate: headerUser,
  queries: {
    all: () => ({ table: "item", orderBy: [["id", "asc"]] }),
    one: (args) => ({ table: "item", where: equals("id", (args as { id: string }).id) }),
    byN: (args) => ({
      table: "item",
      orderBy: [["id", "desc"]],
      limit: 2,
      where: equals("n", (args as { n: number }).n),
    }),
  },
};

type Op =
  | { op: "put"; hash: string; name: string; args: unknown }
  | { op: "del"; hash: string }
  | { op: "clear" };

const IDS = ["a", "b", "c", "d", "e"];
const put: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ op: "put", hash: "all", name: "all", args: {} }),
  fc.constantFrom(...IDS).map((id): Op => ({ op: "put", hash: `one-${id}`, name: "one", args: { id } })),
  fc.integer({ min: 0, max: 2 }).map((n): Op => ({ op: "put", hash: `n-${n}`, name: "byN", args: { n } })),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: put },
  { weight: 2, arbitrary: put.map((p): Op => ({ op: "del", hash: (p as { hash: string }).hash })) },
  { weight: 1, arbitrary: fc.constant<Op>({ op: "clear" }) },
);
const write = fc.record({ id: fc.constantFrom(...IDS), n: fc.option(fc.integer({ min: 0, max: 2 })) });
const scenario = fc.record({
  maxChangeRows: fc.constantFrom(1, 2, 1_000),
  rounds: fc.array(
    fc.record({ writes: fc.array(write, { maxLength: 4 }), patch: fc.array(op, { maxLength: 12 }) }),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const services: NamespaceService[] = [];
afterEach(() => {
  for (const service of services.splice(0)) service.close();
});

/** What a client holds after the rounds, its patches applied in steps of `size` new queries. */
async function clientAfter(s: Scenario, size: number, queryAnswerMs?: number) {
  const { service } = await testService({
    ...config,
    maxChangeRows: s.maxChangeRows,
    ...(queryAnswerMs === undefined ? {} : { queryAnswerMs }),
  });
  services.push(service);
  const claims = { userID: "alice" };
  const rows = new Map<string, unknown>();
  let cookie: number | null = null;
  let got: string[] = [];
  let id = 0;
  const pull = async (patch: Op[]) => {
    const result = await runSlicedPull(
      service.contexts.pull,
      { clientGroupID: "g", clientID: "c", cookie, queries: { patch } },
      claims,
      { size, took() {} },
      () => Promise.resolve(),
    );
    const answer = JSON.parse(result.response.body!) as {
      cookie: number;
      unchanged?: true;
      gotQueries?: string[];
      rowsPatch?: Array<{ op: string; value?: { id: string }; id?: { id: string } }>;
    };
    cookie = answer.cookie;
    if (answer.gotQueries) got = answer.gotQueries;
    for (const row of answer.rowsPatch ?? []) {
      if (row.op === "clear") rows.clear();
      else if (row.op === "put") rows.set(row.value!.id, row.value);
      else rows.delete(row.id!.id);
    }
    return answer.unchanged === true;
  };
  for (const round of s.rounds) {
    for (const w of round.writes) {
      await service.push(
        "native",
        {
          clientGroupID: "w",
          pushVersion: 1,
          mutations: [{ type: "custom", id: ++id, clientID: "w-c", name: "set", args: [w] }],
        },
        claims,
      );
    }
    await pull(round.patch);
    // As a client does: again until the answer is unchanged (a cut answer owes the rest).
    while (!(await pull([]))) {}
  }
  return { rows: [...rows.entries()].sort(), got: [...got].sort() };
}

describe("a native pull's query patch applied in steps", () => {
  it("leaves the client with what one step gives it (steps of 1, of a random size, unbounded)", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 2, max: 5 }), async (s, size) => {
        const whole = await clientAfter(s, Number.POSITIVE_INFINITY);
        expect(await clientAfter(s, 1)).toEqual(whole);
        expect(await clientAfter(s, size)).toEqual(whole);
        for (const service of services.splice(0)) service.close();
      }),
      { numRuns: 60 },
    );
  });

  it("leaves the client with the same once the answer's time is spent and the rest of the patch is deferred", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 1, max: 3 }), async (s, size) => {
        const whole = await clientAfter(s, Number.POSITIVE_INFINITY);
        expect(await clientAfter(s, size, 0)).toEqual(whole);
        for (const service of services.splice(0)) service.close();
      }),
      { numRuns: 60 },
    );
  });

  it("answers a part once the steps spent the answer's time: the first step's query, the rest deferred", async () => {
    const { service } = await testService({ ...config, queryAnswerMs: 0 });
    services.push(service);
    const claims = { userID: "alice" };
    await service.push(
      "native",
      {
        clientGroupID: "w",
        pushVersion: 1,
        mutations: IDS.map((id, i) => ({
          type: "custom",
          id: i + 1,
          clientID: "w-c",
          name: "set",
          args: [{ id, n: 1 }],
        })),
      },
      claims,
    );
    const patch = IDS.map((id) => ({ op: "put", hash: `one-${id}`, name: "one", args: { id } }));
    const pull = async (cookie: number | null, ops: unknown[]) => {
      const result = await runSlicedPull(
        service.contexts.pull,
        { clientGroupID: "g", clientID: "c", cookie, queries: { patch: ops } },
        claims,
        { size: 1, took() {} },
        () => Promise.resolve(),
      );
      return {
        more: result.more === true,
        answer: JSON.parse(result.response.body!) as {
          cookie: number;
          unchanged?: true;
          gotQueries?: string[];
        },
      };
    };
    // The first step's query (a step of one put), then the last step: one evaluated, three deferred.
    const first = await pull(null, patch);
    expect(first.more).toBe(true);
    expect(first.answer.gotQueries).toEqual(["one-a", "one-b"]);
    let { cookie } = first.answer;
    const got: string[][] = [];
    for (let i = 0; i < 10; i++) {
      const next = await pull(cookie, []);
      if (next.answer.unchanged) break;
      got.push(next.answer.gotQueries ?? []);
      cookie = next.answer.cookie;
    }
    expect(got.at(-1)).toEqual(patch.map((op) => op.hash));
    expect(got.length).toBeGreaterThanOrEqual(3);
  });
});

const hosts: WeirHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

describe("a query patch too big for one step, over HTTP", () => {
  it("completes across steps while another namespace's pull is answered in between", async () => {
    // An answer time no step reaches, however loaded the machine: the stop at the answer's time
    // (the test above) would make the answer a part.
    const host = await testHost({ ...config, queryAnswerMs: 60_000 });
    hosts.push(host);
    const user = "alice";
    const ids = Array.from({ length: 100 }, (_, i) => `i${String(i).padStart(3, "0")}`);
    const mutations = ids.map((id, i) => ({
      type: "custom",
      clientID: "w-c",
      id: i + 1,
      name: "set",
      args: [{ id, n: 0 }],
    }));
    expect(
      (
        await send(host, "POST", "/big/push", {
          user,
          body: { clientGroupID: "w", pushVersion: 1, mutations },
        })
      ).status,
    ).toBe(200);
    // Both namespaces are open before the race.
    const pull = (ns: string, group: string, patch?: Op[]) =>
      send(host, "POST", `/${ns}/pull`, {
        user,
        body: {
          clientGroupID: group,
          clientID: `${group}-c`,
          cookie: null,
          ...(patch ? { queries: { patch } } : {}),
        },
      });
    expect((await pull("other", "g")).status).toBe(200);
    // More new queries than any one step evaluates (at most 32).
    const patch = ids.map((id): Op => ({ op: "put", hash: `one-${id}`, name: "one", args: { id } }));
    const order: string[] = [];
    const big = pull("big", "g", patch).then((answer) => {
      order.push("big");
      return answer;
    });
    const other = pull("other", "g2").then((answer) => {
      order.push("other");
      return answer;
    });
    const [bigAnswer, otherAnswer] = await Promise.all([big, other]);
    expect(order).toEqual(["other", "big"]);
    expect(otherAnswer.status).toBe(200);
    expect(bigAnswer.status).toBe(200);
    expect([...bigAnswer.json.gotQueries].sort()).toEqual(
      patch.map((p) => (p as { hash: string }).hash).sort(),
    );
    expect(bigAnswer.json.rowsPatch[0]).toEqual({ op: "clear" });
    expect(
      bigAnswer.json.rowsPatch
        .slice(1)
        .map((row: { value: { id: string } }) => row.value.id)
        .sort(),
    ).toEqual(ids);
    // The answer's cookie is the group's: its next pull is caught up.
    const next = await send(host, "POST", "/big/pull", {
      user,
      body: { clientGroupID: "g", clientID: "g-c", cookie: bigAnswer.json.cookie, queries: { patch: [] } },
    });
    expect(next.json).toEqual({ cookie: bigAnswer.json.cookie, unchanged: true });
  });
});

describe("a query patch past the group's caps", () => {
  /** A host whose groups hold 40 queries at most; Alice's pulls of group g; `count` puts of `one`. */
  async function capped() {
    const host = await testHost({ ...config, maxGroupQueries: 40 });
    hosts.push(host);
    const pull = (cookie: number | null, patch: Op[]) =>
      send(host, "POST", "/ns/pull", {
        user: "alice",
        body: { clientGroupID: "g", clientID: "g-c", cookie, queries: { patch } },
      });
    const puts = (prefix: string, count: number) =>
      Array.from(
        { length: count },
        (_, i): Op => ({ op: "put", hash: `${prefix}${i}`, name: "one", args: { id: `${i}` } }),
      );
    return { pull, puts };
  }

  it("is refused before any step is applied", async () => {
    const { pull, puts } = await capped();
    const refused = await pull(null, puts("q", 50));
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({ error: "query_budget_exceeded" });
    expect((await pull(null, [])).json).toMatchObject({ gotQueries: [] });
  });

  it("is refused before any step when it passes them only with the queries the group holds", async () => {
    const { pull, puts } = await capped();
    const held = await pull(null, puts("q", 5));
    expect(held.json.gotQueries).toHaveLength(5);
    // 40 new queries fit alone, and their first step (32) fits beside the 5 held; all 45 do not.
    const refused = await pull(held.json.cookie, puts("r", 40));
    expect(refused.status).toBe(422);
    expect(refused.json.message).toMatch(/more than 40 queries .*maxGroupQueries/);
    const after = await pull(held.json.cookie, []);
    expect(after.json).toEqual({ cookie: held.json.cookie, unchanged: true });
    expect((await pull(null, [])).json.gotQueries).toEqual(held.json.gotQueries);
  });
});
