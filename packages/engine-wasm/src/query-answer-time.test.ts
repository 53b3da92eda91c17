import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import { itemSchema, ofKind, rowsOfKind } from "../test/items.js";
import type { PullInput, QueryPatchOp, Visibility } from "./types.js";

const schema = itemSchema;

const ITEMS = 3000;

// A metered pull (one with queryBudgetMs) renders a large answer a page of rows at a time, and
// cuts it between pages once it has run `answerMs`: the rest stay owed, as when maxChangeRows
// cuts it. answerMs 0 cuts after every page; the client still ends with every row.
describe.each(DATABASES)("an answer cut by its time on $kind", ({ open }) => {
  async function items() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
        "INSERT INTO item SELECT printf('i%05d', i), 'a', 'note ' || i FROM n",
      [ITEMS],
    );
    const client = new ClientRows();
    const answers: { rows: number; more: boolean }[] = [];
    /** Pulls until unchanged, with `patch` on the first pull (a client sends it until answered). */
    const pullAll = (patch: QueryPatchOp[], limits: Partial<PullInput>, between?: () => void) => {
      answers.length = 0;
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(100);
        const result = ns.pull({ cookie: client.cookie, queries: { patch }, ...limits });
        if (result.json.unchanged) return;
        patch = [];
        client.apply(result.json as never, schema);
        answers.push({ rows: result.puts + result.dels, more: result.more });
        if (result.more) between?.();
      }
    };
    return { ns, client, answers, pullAll };
  }

  it("sends a reset's rows a page at a time once the pull has run its answer's time", async () => {
    const { ns, client, answers, pullAll } = await items();
    pullAll([ofKind("a")], { queryBudgetMs: 60_000, answerMs: 0 });
    // Each answer but the last is one page; the last holds the rest.
    expect(answers.length).toBe(Math.ceil(ITEMS / 256));
    expect(answers.slice(0, -1).every((a) => a.rows === 256 && a.more)).toBe(true);
    expect(answers.at(-1)).toEqual({ rows: ITEMS % 256, more: false });
    expect(client.rows).toEqual(rowsOfKind(ns, "a"));
  });

  it("paces a group's pulls that leave out queries as those that carry them", async () => {
    const { ns, client } = await items();
    const pages: Array<{ rows: number; more: boolean }> = [];
    let queries: { patch: QueryPatchOp[] } | undefined = { patch: [ofKind("a")] };
    for (let pulls = 0; pulls < 100; pulls++) {
      // After its first pull the client leaves the field out: its pulls still answer by its query.
      const result = ns.pull({
        cookie: client.cookie,
        ...(queries ? { queries } : {}),
        queryBudgetMs: 60_000,
        answerMs: 0,
      });
      queries = undefined;
      if (result.json.unchanged) break;
      client.apply(result.json as never, schema);
      pages.push({ rows: result.puts + result.dels, more: result.more });
    }
    expect(pages.length).toBe(Math.ceil(ITEMS / 256));
    expect(pages.slice(0, -1).every((a) => a.rows === 256 && a.more)).toBe(true);
    expect(client.rows).toEqual(rowsOfKind(ns, "a"));
  });

  it("sends every row the caps allow when the pull has time, metered or not", async () => {
    for (const limits of [{ queryBudgetMs: 60_000 }, { queryBudgetMs: 60_000, answerMs: 60_000 }, {}]) {
      const { ns, client, answers, pullAll } = await items();
      pullAll([ofKind("a")], limits);
      expect(answers).toEqual([{ rows: ITEMS, more: false }]);
      expect(client.rows).toEqual(rowsOfKind(ns, "a"));
      // The row cap holds across pages: 700 rows an answer, pages of 256.
      const capped = await items();
      capped.pullAll([ofKind("a")], { ...limits, maxChangeRows: 700 });
      expect(capped.answers.map((a) => a.rows)).toEqual([700, 700, 700, 700, 200]);
      expect(capped.client.rows).toEqual(rowsOfKind(capped.ns, "a"));
    }
  });

  it("names a small query complete in the part that sends its last row, a large one in the last part", async () => {
    const { ns, client } = await items();
    const firstTen: QueryPatchOp = {
      op: "put",
      hash: "first-ten",
      name: "firstTen",
      args: [],
      ast: { table: "item", orderBy: [["id", "asc"]], limit: 10 },
    };
    const got: string[][] = [];
    let cookie: number | null = null;
    for (let pulls = 0; pulls < 100; pulls++) {
      const result = ns.pull({
        cookie,
        queries: { patch: cookie === null ? [firstTen, ofKind("a")] : [] },
        queryBudgetMs: 60_000,
        answerMs: 0,
      });
      if (result.json.unchanged) break;
      client.apply(result.json as never, schema);
      cookie = result.json.cookie;
      got.push((result.json as { gotQueries: string[] }).gotQueries);
    }
    // The first part evaluates the ten (the first query in hash order; the other waits) and sends
    // them; the parts after send the rest a page at a time.
    expect(got.length).toBe(1 + Math.ceil((ITEMS - 10) / 256));
    expect(got.slice(0, -1).every((names) => names.join() === "first-ten")).toBe(true);
    expect(got.at(-1)).toEqual(["first-ten", "kind-a"]);
    expect(client.rows).toEqual(rowsOfKind(ns, "a"));
  });

  it("sends the rows a write moved a page at a time, with writes between the pages", async () => {
    const { ns, client, answers, pullAll } = await items();
    pullAll([ofKind("b")], { queryBudgetMs: 60_000, answerMs: 0 });
    expect(client.rows.size).toBe(0);
    // 2,000 rows move into the query: more than one statement renders, so they are owed.
    ns.sql("UPDATE item SET kind = 'b' WHERE id < 'i02000'");
    let writes = 0;
    pullAll([], { queryBudgetMs: 60_000, answerMs: 0 }, () => {
      // Between two parts: a row sent already changes, one owed leaves the query, one enters.
      writes++;
      ns.sql("UPDATE item SET note = ? WHERE id = 'i00000'", [`changed ${writes}`]);
      ns.sql("UPDATE item SET kind = 'c' WHERE id = ?", [`i01${String(900 + writes).padStart(3, "0")}`]);
      ns.sql("UPDATE item SET kind = 'b' WHERE id = ?", [`i02${String(500 + writes).padStart(3, "0")}`]);
    });
    expect(writes).toBeGreaterThan(2);
    expect(answers.slice(0, -1).every((a) => a.more && a.rows > 0 && a.rows <= 256)).toBe(true);
    expect(client.rows).toEqual(rowsOfKind(ns, "b"));
    expect(client.rows.size).toBe(2000);
  });
});

// A reset evaluates every query the group holds. On a metered pull, once the call has run its
// answer's time after its first query, the rest are deferred: each pull after evaluates at least
// one more, the answers are parts (more, the deferred queries not named complete, mutation ids
// held back), and the client ends with what one answer would have given it.
describe.each(DATABASES)("a reset's queries deferred past its answer's time on $kind", ({ open }) => {
  const KINDS = ["a", "b", "c"];

  async function kinds() {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 300) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 3), 'note ' || i FROM n",
    );
    /** Pulls for `group` from `client`'s cookie until unchanged; answers each answer's body and `more`. */
    const pullAll = (
      group: string,
      client: ClientRows,
      patch: QueryPatchOp[],
      limits: Partial<PullInput>,
    ) => {
      const parts: { more: boolean; got: string[]; ids: Record<string, number>; reset: boolean }[] = [];
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(20);
        const result = ns.pull({
          clientGroupID: group,
          cookie: client.cookie,
          queries: { patch },
          ...limits,
        });
        if (result.json.unchanged) return parts;
        patch = [];
        client.apply(result.json as never, schema);
        const json = result.json as { gotQueries: string[]; lastMutationIDChanges: Record<string, number> };
        parts.push({
          more: result.more,
          got: json.gotQueries,
          ids: json.lastMutationIDChanges,
          reset: result.reset,
        });
      }
    };
    const all = () => new Map(KINDS.flatMap((kind) => [...rowsOfKind(ns, kind)]));
    return { ns, pullAll, all };
  }

  it("answers a reset in parts, a query a pull, and the client ends with every row", async () => {
    const { ns, pullAll, all } = await kinds();
    const first = new ClientRows();
    pullAll("g", first, KINDS.map(ofKind), { queryBudgetMs: 60_000 });
    expect(first.rows).toEqual(all());
    ns.mutate("g", "c1", (sql) => sql("UPDATE item SET note = 'mine' WHERE id = 'i00000'"));
    // Another client of the group starts from nothing, with no time for its answers.
    const second = new ClientRows();
    let wrote = false;
    const parts = pullAll("g", second, [], { queryBudgetMs: 60_000, answerMs: 0 });
    expect(parts.map((p) => p.more)).toEqual([true, true, false]);
    expect(parts[0]!.reset).toBe(true);
    // Each part names the queries whose rows the client holds by then, and no mutation id before the last.
    expect(parts.map((p) => p.got)).toEqual([
      ["kind-a"],
      ["kind-a", "kind-b"],
      ["kind-a", "kind-b", "kind-c"],
    ]);
    expect(parts.map((p) => p.ids)).toEqual([{}, {}, { c1: 1 }]);
    expect(second.rows).toEqual(all());
    // A write between the parts, to a row of a query still deferred, arrives as it is now.
    const third = new ClientRows();
    const limits = { queryBudgetMs: 60_000, answerMs: 0 };
    const reset = ns.pull({ clientGroupID: "g", cookie: null, queries: { patch: [] }, ...limits });
    third.apply(reset.json as never, schema);
    expect(reset.more).toBe(true);
    ns.sql("UPDATE item SET note = 'later' WHERE id = 'i00002'");
    wrote = true;
    pullAll("g", third, [], limits);
    expect(wrote && third.rows.get('item/["i00002"]')).toEqual({ id: "i00002", kind: "c", note: "later" });
    expect(third.rows).toEqual(all());
  });

  it("lends no rows from a group whose queries are deferred", async () => {
    const { ns, pullAll, all } = await kinds();
    const limits = { queryBudgetMs: 60_000, visibility: {} };
    for (const group of ["g1", "g2"]) pullAll(group, new ClientRows(), KINDS.map(ofKind), limits);
    // A write to a row of a's: g2 can no longer lend its rows as they are.
    ns.sql("UPDATE item SET note = 'moved' WHERE id = 'i00000'");
    // g1 starts over and stops after its first query: it holds a's rows only, with b and c deferred.
    const g1 = new ClientRows();
    const part = ns.pull({
      clientGroupID: "g1",
      cookie: null,
      queries: { patch: [] },
      ...limits,
      answerMs: 0,
    });
    g1.apply(part.json as never, schema);
    expect([part.reset, part.more, part.puts]).toEqual([true, true, 100]);
    // g2, holding the same queries, starts over with time enough: it must not take g1's rows as its own.
    const g2 = new ClientRows();
    const parts = pullAll("g2", g2, [], limits);
    expect(parts.map((p) => p.more)).toEqual([false]);
    expect(parts[0]!.got).toEqual(["kind-a", "kind-b", "kind-c"]);
    expect(g2.rows).toEqual(all());
    pullAll("g1", g1, [], limits);
    expect(g1.rows).toEqual(all());
  });
});

// After writes (or a change of claims), a pull re-evaluates the queries they affect. On a metered
// pull, once the call has run its answer's time after the first of them, the rest are deferred
// as a reset's are, each until its turn. After writes each keeps the rows they did not change and
// lets go of the rest (those could be stale), so the client never holds a row as it no longer is;
// after a change of claims each lets go of every row. The client ends with what one answer would
// have given it.
describe.each(DATABASES)("queries a write affects, deferred past the answer's time on $kind", ({ open }) => {
  const KINDS = ["a", "b", "c"];
  /**
   * A kind's rows as a window (up to 2,000 of them, by id): a query a write can move rows in and
   * out of through other rows, evaluated whole (a plain `ofKind` is brought up to date among the
   * changed rows alone, however late, and so is a window of more than 2,048 rows from its bound:
   * query-window-pages.test.ts).
   */
  const windowOfKind = (kind: string): QueryPatchOp => {
    const put = ofKind(kind) as Extract<QueryPatchOp, { op: "put" }>;
    return { ...put, ast: { ...(put.ast as Record<string, unknown>), limit: 2000 } };
  };
  const timed = { queryBudgetMs: 60_000 };
  const noTime = { queryBudgetMs: 60_000, answerMs: 0 };

  async function hydrated(visibility?: Visibility) {
    const ns = new Namespace(await testEngine(), open(), schema);
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 300) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 3), 'note ' || i FROM n",
    );
    const client = new ClientRows();
    const parts: Array<{ more: boolean; got: string[]; ids: Record<string, number>; rows: number }> = [];
    /**
     * Rows the client held after some part with other values than the database's then, or of a
     * kind none of its queries holds.
     */
    const stale: string[] = [];
    const pullAll = (limits: Partial<PullInput>, patch: QueryPatchOp[] = [], between?: () => void) => {
      parts.length = 0;
      for (let pulls = 0; ; pulls++) {
        expect(pulls).toBeLessThan(40);
        const result = ns.pull({ cookie: client.cookie, queries: { patch }, ...limits });
        if (result.json.unchanged) return;
        patch = [];
        client.apply(result.json as never, schema);
        const json = result.json as { gotQueries: string[]; lastMutationIDChanges: Record<string, number> };
        parts.push({
          more: result.more,
          got: json.gotQueries,
          ids: json.lastMutationIDChanges,
          rows: client.rows.size,
        });
        const now = new Map(KINDS.concat("d").flatMap((kind) => [...rowsOfKind(ns, kind)]));
        for (const [key, row] of client.rows) {
          if (JSON.stringify(row) !== JSON.stringify(now.get(key))) stale.push(key);
          if (!KINDS.includes((row as { kind: string }).kind)) stale.push(key);
        }
        if (result.more) between?.();
      }
    };
    pullAll({ ...timed, ...(visibility ? { visibility } : {}) }, KINDS.map(windowOfKind));
    expect(client.rows.size).toBe(300);
    const all = () => new Map(KINDS.flatMap((kind) => [...rowsOfKind(ns, kind)]));
    return { ns, client, parts, stale, pullAll, all };
  }

  it("re-evaluates one query a pull, the others keeping the rows the write did not change until their turn", async () => {
    const { ns, client, parts, stale, pullAll, all } = await hydrated();
    // A mutation changes a row of each query, and moves one of a's out of every query.
    ns.mutate("g", "c1", (sql) => {
      sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i00002')");
      sql("UPDATE item SET kind = 'd' WHERE id = 'i00003'");
    });
    pullAll(noTime);
    expect(parts.map((p) => p.more)).toEqual([true, true, false]);
    // The first part brings a up to date (99 rows); b and c let go of the row the write changed
    // in each, and keep their other 99 (none of them stale).
    expect(parts[0]!.rows).toBe(297);
    expect(stale).toEqual([]);
    expect(parts.map((p) => p.got)).toEqual([
      ["kind-a"],
      ["kind-a", "kind-b"],
      ["kind-a", "kind-b", "kind-c"],
    ]);
    // The mutation id comes with the last part, once every row it changed is there.
    expect(parts.map((p) => p.ids)).toEqual([{}, {}, { c1: 1 }]);
    expect(client.rows).toEqual(all());
    expect(client.rows.get('item/["i00001"]')).toMatchObject({ note: "changed" });
    expect(client.rows.has('item/["i00003"]')).toBe(false);
  });

  it("defers, past the answer's time, a query holding many rows, which lets go of the changed ones alone", async () => {
    const { ns, client, parts, stale, pullAll, all } = await hydrated();
    // Each kind now holds 1,100 rows: letting go of them all would cost what evaluating them does.
    ns.sql(
      "WITH RECURSIVE n(i) AS (SELECT 300 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 3300) " +
        "INSERT INTO item SELECT printf('i%05d', i), char(97 + i % 3), 'note ' || i FROM n",
    );
    pullAll(timed);
    expect(client.rows.size).toBe(3300);
    ns.sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i00002')");
    pullAll(noTime);
    expect(parts.map((p) => p.more)).toEqual([true, true, false]);
    expect(parts.map((p) => p.rows)).toEqual([3298, 3299, 3300]);
    expect(stale).toEqual([]);
    expect(client.rows).toEqual(all());
  });

  /**
   * The client's queries become three windows, the first 40 rows of each kind by note, and
   * `write()` moves rows in and out of each: a row enters each window at its front, a held one
   * changes (another each time), and a held one of b's leaves its kind.
   */
  async function windowed() {
    const hydration = await hydrated();
    const { ns, client, pullAll } = hydration;
    const window = (kind: string): QueryPatchOp => {
      const put = ofKind(kind) as Extract<QueryPatchOp, { op: "put" }>;
      return {
        ...put,
        hash: `first-${kind}`,
        name: "firstOfKind",
        ast: {
          ...(put.ast as Record<string, unknown>),
          orderBy: [
            ["note", "asc"],
            ["id", "asc"],
          ],
          limit: 40,
        },
      };
    };
    pullAll(timed, [
      ...KINDS.map((kind) => ({ op: "del" as const, hash: `kind-${kind}` })),
      ...KINDS.map(window),
    ]);
    const inWindows = () =>
      new Map(
        KINDS.flatMap((kind) =>
          [...rowsOfKind(ns, kind)]
            .sort(([, a], [, b]) => {
              const [x, y] = [a as { note: string; id: string }, b as { note: string; id: string }];
              return x.note < y.note ? -1 : x.note > y.note ? 1 : x.id < y.id ? -1 : 1;
            })
            .slice(0, 40),
        ),
      );
    expect(client.rows).toEqual(inWindows());
    let writes = 0;
    const write = () => {
      writes++;
      const held = (kind: string, nth: number) =>
        `(SELECT id FROM item WHERE kind = '${kind}' AND note NOT LIKE 'aa%' ORDER BY note, id LIMIT 1 OFFSET ${nth})`;
      ns.mutate("g", "c1", (sql) => {
        for (const kind of KINDS) {
          sql(
            `UPDATE item SET note = ? WHERE id = (SELECT max(id) FROM item WHERE kind = ? AND note NOT LIKE 'aa%')`,
            [`aa ${writes}`, kind],
          );
          sql(`UPDATE item SET note = note || '!' WHERE id = ${held(kind, writes)}`);
        }
        sql(`UPDATE item SET kind = 'd' WHERE id = ${held("b", 10)}`);
      });
    };
    return { ...hydration, inWindows, write, writes: () => writes };
  }

  it("keeps a deferred window's rows that no write changed, across writes between its parts", async () => {
    const { client, parts, stale, pullAll, inWindows, write, writes } = await windowed();
    write();
    pullAll(noTime, [], () => {
      if (writes() < 4) write();
    });
    expect(writes()).toBe(4);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.slice(0, -1).every((p) => p.more)).toBe(true);
    // The deferred windows kept rows: no part left the client with fewer than the first's.
    expect(Math.min(...parts.map((p) => p.rows))).toBeGreaterThan(40);
    expect(stale).toEqual([]);
    expect(client.rows).toEqual(inWindows());
    expect(parts.at(-1)!.ids).toEqual({ c1: 4 });
  });

  it("evaluates the new queries of a patch one a pull past the answer's time, the rest deferred", async () => {
    const { ns, all } = await hydrated();
    const client = new ClientRows();
    // A group holding one query puts three more in one pull, with no time for its answers.
    const first = ns.pull({ clientGroupID: "n", cookie: null, queries: { patch: [ofKind("a")] }, ...timed });
    client.apply(first.json as never, schema);
    const more = ["b", "c", "d"].map(ofKind);
    ns.sql("UPDATE item SET kind = 'd' WHERE id IN ('i00003', 'i00006')");
    const got: string[][] = [];
    let patch = more;
    for (let pulls = 0; pulls < 10; pulls++) {
      const result = ns.pull({ clientGroupID: "n", cookie: client.cookie, queries: { patch }, ...noTime });
      patch = [];
      if (result.json.unchanged) break;
      client.apply(result.json as never, schema);
      got.push((result.json as { gotQueries: string[] }).gotQueries);
    }
    // The first pull's time goes to a, which the write moved a row out of: the puts all wait.
    expect(got).toEqual([
      ["kind-a"],
      ["kind-a", "kind-b"],
      ["kind-a", "kind-b", "kind-c"],
      ["kind-a", "kind-b", "kind-c", "kind-d"],
    ]);
    expect(client.rows).toEqual(new Map([...all(), ...rowsOfKind(ns, "d")]));
    // Without the write, the first pull evaluates a new query itself.
    const other = new ClientRows();
    other.apply(
      ns.pull({ clientGroupID: "o", cookie: null, queries: { patch: [ofKind("a")] }, ...timed })
        .json as never,
      schema,
    );
    const part = ns.pull({ clientGroupID: "o", cookie: other.cookie, queries: { patch: more }, ...noTime });
    expect([part.more, (part.json as { gotQueries: string[] }).gotQueries]).toEqual([
      true,
      ["kind-a", "kind-b"],
    ]);
  });

  it("gives every deferred query its turn while writes come between every part", async () => {
    const { ns, client, parts, stale, pullAll, inWindows, write } = await windowed();
    // A write before every pull: each affects all three windows, and a pull has time for one.
    // Whichever were evaluated first, the others still take their turns, the longest waiting
    // first: after a few parts each window holds a row a recent write moved to its front.
    const turns: string[] = [];
    let pulls = 0;
    write();
    pullAll(noTime, [], () => {
      pulls++;
      if (pulls < 12) write();
      const fronts = KINDS.filter((kind) =>
        [...client.rows.values()].some((row) => {
          const { kind: k, note } = row as { kind: string; note: string };
          return k === kind && note === `aa ${pulls}`;
        }),
      );
      turns.push(fronts.join(""));
    });
    expect(parts.slice(0, 11).every((p) => p.more)).toBe(true);
    // Each kind's window was brought up to date in at least three of the eleven parts.
    for (const kind of KINDS) expect(turns.filter((t) => t.includes(kind)).length).toBeGreaterThanOrEqual(3);
    expect(stale).toEqual([]);
    expect(client.rows).toEqual(inWindows());
    expect(ns.db.adapter.query("SELECT count(*) FROM _weir_deferred_queries", [])).toEqual([[0]]);
  });

  it("adds the kept rows' mark to the deferred queries' table an earlier engine created", async () => {
    const { ns, client, parts, stale, pullAll, all } = await hydrated();
    ns.db.adapter.exec("DROP TABLE _weir_deferred_queries", []);
    ns.db.adapter.exec(
      "CREATE TABLE _weir_deferred_queries (group_id TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (group_id, hash)) WITHOUT ROWID",
      [],
    );
    ns.db.adapter.exec("INSERT INTO _weir_deferred_queries VALUES ('other', 'q')", []);
    ns.db.transaction(() => ns.engine.install(ns.db.adapter, schema));
    // Its rows held none.
    expect(ns.db.adapter.query("SELECT group_id, hash, keeps, turn FROM _weir_deferred_queries", [])).toEqual(
      [["other", "q", 0, 0]],
    );
    ns.sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i00002')");
    pullAll(noTime);
    expect(parts.map((p) => p.rows)).toEqual([298, 299, 300]);
    expect(stale).toEqual([]);
    expect(client.rows).toEqual(all());
  });

  it("re-evaluates every affected query in one answer when it has the time", async () => {
    const { ns, client, parts, pullAll, all } = await hydrated();
    ns.sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i00002')");
    pullAll(timed);
    expect(parts.map((p) => p.more)).toEqual([false]);
    expect(client.rows).toEqual(all());
  });

  it("gives no follower an answer that left queries deferred", async () => {
    for (const limits of [timed, noTime]) {
      const { ns, client } = await hydrated();
      const other = new ClientRows();
      other.apply(
        ns.pull({ clientGroupID: "h", cookie: null, queries: { patch: KINDS.map(windowOfKind) }, ...timed })
          .json as never,
        schema,
      );
      ns.sql("UPDATE item SET note = 'changed' WHERE id IN ('i00000', 'i00001', 'i00002')");
      const leader = ns.pull({ cookie: client.cookie, queries: { patch: [] }, followers: ["h"], ...limits });
      // With time, h (the same queries, at the same cookie) takes g's answer; with none, g's
      // answer is a part with queries deferred, which h's membership does not share.
      expect(leader.more).toBe(limits === noTime);
      expect(leader.followed?.map((f) => f.clientGroupID)).toEqual(limits === noTime ? [] : ["h"]);
    }
  });

  it("re-evaluates one query a pull after the caller's claims change, hiding what they hide", async () => {
    const everything: Visibility = { item: { sql: "note <> ?", params: ["none"] } };
    const { client, parts, pullAll, all } = await hydrated(everything);
    // The claims now hide one row of b's: b holds none of it stale meanwhile, and never sends it.
    const hiding: Visibility = { item: { sql: "id <> ?", params: ["i00001"] } };
    pullAll({ ...noTime, visibility: hiding });
    expect(parts.map((p) => p.more)).toEqual([true, true, false]);
    expect(parts[0]!.rows).toBe(100);
    const visible = all();
    visible.delete('item/["i00001"]');
    expect(client.rows).toEqual(visible);
  });
});
