import { afterEach, describe, expect, it, vi } from "vitest";
import { headerUser, send, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";

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
    // No EXISTS or limit: read in ranges of the item's key, each with its tags.
    everyItemTagged: () => ({
      table: "item",
      orderBy: [["id", "asc"]],
      related: [{ correlation: { parentField: ["id"], childField: ["itemId"] }, subquery: { table: "tag" } }],
    }),
    // Its root's condition holds an EXISTS: the root is read in pages.
    tagged: (args) => ({
      table: "item",
      orderBy: [["id", "asc"]],
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

const hosts: WeirHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const host of hosts.splice(0)) await host.close();
});

describe("a query read in pages, over HTTP", () => {
  it.each([
    { pages: "a turn after every page", queryPageMs: 0, between: true },
    { pages: "no turn (one run)", queryPageMs: 60_000, between: false },
  ])("answers another namespace's pull between its pages ($pages)", async ({ queryPageMs, between }) => {
    const host = await testHost({ ...config, queryPageMs });
    hosts.push(host);
    const user = "alice";
    const ids = Array.from({ length: 40 }, (_, i) => `i${String(i).padStart(3, "0")}`);
    const mutations = ids.map((id, i) => ({
      type: "custom",
      clientID: "w-c",
      id: i + 1,
      name: "add",
      args: [{ id, label: i % 2 === 0 ? "even" : "odd" }],
    }));
    const pushed = await send(host, "POST", "/big/push", {
      user,
      body: { clientGroupID: "w", pushVersion: 1, mutations },
    });
    expect(pushed.status).toBe(200);
    const pull = (ns: string, group: string, withQuery: boolean) =>
      send(host, "POST", `/${ns}/pull`, {
        user,
        body: {
          clientGroupID: group,
          clientID: `${group}-c`,
          cookie: null,
          ...(withQuery
            ? { queries: { patch: [{ op: "put", hash: "even", name: "tagged", args: { label: "even" } }] } }
            : {}),
        },
      });
    // Both namespaces are open before the race.
    expect((await pull("other", "g", false)).status).toBe(200);
    const order: string[] = [];
    const big = pull("big", "g", true).then((answer) => {
      order.push("big");
      return answer;
    });
    const other = pull("other", "g2", false).then((answer) => {
      order.push("other");
      return answer;
    });
    const [bigAnswer, otherAnswer] = await Promise.all([big, other]);
    // With a turn after every page of the 40 root rows, the other namespace is answered while
    // the query is still being read; in one run, only after it.
    expect(order).toEqual(between ? ["other", "big"] : ["big", "other"]);
    expect(otherAnswer.status).toBe(200);
    expect(bigAnswer.status).toBe(200);
    expect(bigAnswer.json.gotQueries).toEqual(["even"]);
    const items = bigAnswer.json.rowsPatch
      .filter((row: { tableName?: string }) => row.tableName === "item")
      .map((row: { value: { id: string } }) => row.value.id)
      .sort();
    expect(items).toEqual(ids.filter((_, i) => i % 2 === 0));
    // The answer's cookie is the group's: its next pull is caught up.
    const next = await send(host, "POST", "/big/pull", {
      user,
      body: { clientGroupID: "g", clientID: "g-c", cookie: bigAnswer.json.cookie, queries: { patch: [] } },
    });
    expect(next.json).toEqual({ cookie: bigAnswer.json.cookie, unchanged: true });
  });
});

describe("a reset read in pages, over HTTP", () => {
  it.each([
    { dialect: "native", pages: "a turn after every page", queryPageMs: 0, between: true },
    { dialect: "replicache", pages: "a turn after every page", queryPageMs: 0, between: true },
    { dialect: "native", pages: "no turn (one run)", queryPageMs: 60_000, between: false },
  ])(
    "answers another namespace's pull between its pages ($dialect, $pages)",
    async ({ dialect, queryPageMs, between }) => {
      const host = await testHost({ ...config, queryPageMs });
      hosts.push(host);
      const user = "alice";
      const add = (from: number, count: number, clientGroupID: string) =>
        send(host, "POST", "/big/push", {
          user,
          body: {
            clientGroupID,
            pushVersion: 1,
            mutations: Array.from({ length: count }, (_, i) => ({
              type: "custom",
              clientID: `${clientGroupID}-c`,
              id: i + 1,
              name: "add",
              args: [{ id: `i${String(from + i).padStart(4, "0")}`, label: "x" }],
            })),
          },
        });
      expect((await add(0, 300, "w")).status).toBe(200);
      const route = dialect === "native" ? "pull" : "replicache/pull";
      const pull = (ns: string, group: string) =>
        send(host, "POST", `/${ns}/${route}`, {
          user,
          body: {
            clientGroupID: group,
            cookie: null,
            ...(dialect === "native"
              ? { clientID: `${group}-c` }
              : { pullVersion: 1, profileID: "p", schemaVersion: "" }),
          },
        });
      expect((await pull("other", "g")).status).toBe(200);
      const order: string[] = [];
      const big = pull("big", "g").then((answer) => {
        order.push("big");
        return answer;
      });
      // A write while the reset is read: its answer catches the rows its pages read up to it.
      const written = add(300, 1, "w2");
      const other = pull("other", "g2").then((answer) => {
        order.push("other");
        return answer;
      });
      const [bigAnswer, otherAnswer, writeAnswer] = await Promise.all([big, other, written]);
      expect(order).toEqual(between ? ["other", "big"] : ["big", "other"]);
      expect(otherAnswer.status).toBe(200);
      expect(writeAnswer.status).toBe(200);
      expect(bigAnswer.status).toBe(200);
      const rows = (answer: { json: Record<string, unknown> }) =>
        (answer.json.rowsPatch ?? answer.json.patch ?? []) as PatchOp[];
      expect(rows(bigAnswer)[0]).toEqual({ op: "clear" });
      // The answer is caught up to its cookie: the next pull from it brings only what was
      // written after it (no reset), and the client then holds what a new group's reset gives.
      const after = await send(host, "POST", `/big/${route}`, {
        user,
        body: {
          clientGroupID: "g",
          cookie: bigAnswer.json.cookie,
          ...(dialect === "native"
            ? { clientID: "g-c" }
            : { pullVersion: 1, profileID: "p", schemaVersion: "" }),
        },
      });
      expect(rows(after).some((op) => op.op === "clear")).toBe(false);
      const whole = await pull("big", "fresh");
      const held = apply(apply(new Map(), rows(bigAnswer)), rows(after));
      expect(held.size).toBe(602);
      expect(held).toEqual(apply(new Map(), rows(whole)));
    },
  );
});

interface PatchOp {
  op: string;
  key?: string;
  tableName?: string;
  value?: { id: string };
  id?: { id: string };
}

/** A client's rows after a patch (Replicache's keys, or the native table and id). */
function apply(rows: Map<string, unknown>, ops: readonly PatchOp[]): Map<string, unknown> {
  for (const op of ops) {
    if (op.op === "clear") rows.clear();
    const key = op.key ?? `${op.tableName}/${(op.value ?? op.id)?.id}`;
    if (op.op === "put") rows.set(key, op.value);
    else if (op.op === "del") rows.delete(key);
  }
  return rows;
}

describe("a query read in ranges, over HTTP", () => {
  it("reads a range past its step's budget again smaller, and the group's pulls after read that size", async () => {
    // A clock that moves 0.6 ms each time it is read, and a budget of 1 ms: the meter reads it
    // once every 1,024 rows a step examines, so a step of 2,048 rows or more passes its budget,
    // as a range of 2,048 items with their tags does on a loaded machine. (The query's total is
    // not what is tested.)
    const lines: Array<Record<string, unknown>> = [];
    const host = await testHost(
      { ...config, queryBudgetMs: 1, queryTotalBudgetMs: 60_000 },
      { logger: { log: (_level, line) => lines.push(line as Record<string, unknown>) } },
    );
    hosts.push(host);
    const user = "alice";
    const ids = Array.from({ length: 3_000 }, (_, i) => `i${String(i).padStart(4, "0")}`);
    const pushed = await send(host, "POST", "/big/push", {
      user,
      body: {
        clientGroupID: "w",
        pushVersion: 1,
        mutations: ids.map((id, i) => ({
          type: "custom",
          clientID: "w-c",
          id: i + 1,
          name: "add",
          args: [{ id, label: "x" }],
        })),
      },
    });
    expect(pushed.status).toBe(200);
    let clock = 0;
    vi.spyOn(performance, "now").mockImplementation(() => (clock += 0.6));
    const items = new Set<string>();
    let cookie: number | null = null;
    let patch: unknown[] = [{ op: "put", hash: "all", name: "everyItemTagged", args: {} }];
    const turns: number[] = [];
    for (let pulls = 0; ; pulls++) {
      expect(pulls).toBeLessThan(200);
      const answer = await send(host, "POST", "/big/pull", {
        user,
        body: { clientGroupID: "g", clientID: "g-c", cookie, queries: { patch } },
      });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      patch = [];
      cookie = answer.json.cookie;
      for (const row of answer.json.rowsPatch as Array<{ tableName?: string; value?: { id: string } }>)
        if (row.tableName === "item") items.add(row.value!.id);
      const logged = lines.filter((line) => line.kind === "pull").at(-1)!;
      turns.push((logged.pageTurns as number | undefined) ?? 0);
      if ((answer.json.gotQueries as string[]).includes("all")) break;
    }
    expect(items.size).toBe(3_000);
    // The first pull's runs stopped until its range was small enough; the group's pulls after
    // read that size from the first (the namespace keeps it), and stop no more.
    expect(turns[0]).toBeGreaterThan(0);
    expect(turns.length).toBeGreaterThan(2);
    expect(turns.slice(1)).toEqual(turns.slice(1).map(() => 0));
  });
});
