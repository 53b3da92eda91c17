import type { QueryAST } from "@weir/protocol";
import { describe, expect, it } from "vitest";
import { ClientRows } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import {
  issueSchema,
  issuesCommentedBy,
  issuesLabelled,
  issuesOfMember,
  issuesWithLabelOfKind,
  type LocalRows,
  localView,
} from "../test/issues.js";
import type { QueryPatchOp, Visibility } from "./types.js";

// The rows an EXISTS condition needs reach the client: for each row the query holds, up to three
// rows of the condition's subquery that make it hold (and theirs, for a nested EXISTS), so that a
// client evaluating the query over its own rows (Zero's) answers what the server answers.

const put = (hash: string, ast: unknown): QueryPatchOp => ({ op: "put", hash, name: "q", args: [hash], ast });

/** The client's rows by table, as it evaluates queries over them. */
function byTable(client: ClientRows): LocalRows {
  const rows: LocalRows = new Map();
  for (const [key, value] of client.rows) {
    const table = key.slice(0, key.indexOf("/"));
    rows.set(table, [...(rows.get(table) ?? []), value as Record<string, unknown>]);
  }
  return rows;
}

/** i1 and i2 labelled bug through l1 alone: the issues, their junction rows and the label. */
const BOTH_BY_L1 = [
  'issue/["i1"]',
  'issue/["i2"]',
  'issueLabel/["i1","l1"]',
  'issueLabel/["i2","l1"]',
  'label/["l1"]',
];

describe.each(DATABASES)("the rows of EXISTS conditions on $kind", ({ open }) => {
  async function tracker(visibility?: Visibility) {
    const ns = new Namespace(await testEngine(), open(), issueSchema);
    ns.sql("INSERT INTO kind VALUES ('k1', 'defect'), ('k2', 'idea')");
    ns.sql("INSERT INTO label VALUES ('l1', 'bug', 'k1'), ('l2', 'ui', 'k2'), ('l3', 'crash', 'k1')");
    ns.sql(
      "INSERT INTO issue VALUES ('i1', 'p1', 'a'), ('i2', 'p1', 'b'), ('i3', 'p2', 'c'), ('i4', 'p2', 'd')",
    );
    ns.sql("INSERT INTO issueLabel VALUES ('i1', 'l1'), ('i1', 'l2'), ('i2', 'l2'), ('i3', 'l3')");
    const clients = new Map<string, ClientRows>();
    const pull = (group: string, patch: QueryPatchOp[] = []) => {
      const client = clients.get(group) ?? new ClientRows();
      clients.set(group, client);
      const result = ns.pull({
        cookie: client.cookie,
        clientGroupID: group,
        queries: { patch },
        ...(visibility ? { visibility } : {}),
      });
      if (!result.json.unchanged) client.apply(result.json as never, issueSchema);
      return result;
    };
    /** The rows `asts` hold now, as a client keys them: what a fresh evaluation gives. */
    const fresh = (asts: QueryAST[], as: Visibility | undefined = visibility) =>
      [
        ...new Set(
          asts.flatMap((ast) =>
            ns.engine
              .queryRows(ns.db.adapter, ast, as ? { visibility: as } : {})
              .map((row) => `${row.table}/${JSON.stringify(row.key)}`),
          ),
        ),
      ].sort();
    /** The root rows of `ast` now, by a fresh evaluation on the server. */
    const roots = (ast: QueryAST, as: Visibility | undefined = visibility) =>
      ns.engine
        .queryRows(ns.db.adapter, ast, as ? { visibility: as } : {})
        .filter((row) => row.node === 0)
        .map((row) => `${row.table}/${JSON.stringify(row.key)}`)
        .sort();
    /** The group's rows equal a fresh evaluation, and its own evaluation of `ast` the server's. */
    const expectCurrent = (group: string, asts: QueryAST[]) => {
      const client = clients.get(group)!;
      expect(client.keys()).toEqual(fresh(asts));
      for (const ast of asts) expect(localView(ast, byTable(client))).toEqual(roots(ast));
    };
    return { ns, pull, clients, fresh, roots, expectCurrent };
  }

  it("holds the junction and label rows that make each issue pass, and no others", async () => {
    const { pull, clients, expectCurrent } = await tracker();
    const bug = issuesLabelled("bug");
    pull("g", [put("bug", bug)]);
    expect(clients.get("g")!.keys()).toEqual(['issue/["i1"]', 'issueLabel/["i1","l1"]', 'label/["l1"]']);
    expect(localView(bug, byTable(clients.get("g")!))).toEqual(['issue/["i1"]']);
    expectCurrent("g", [bug]);
  });

  it("keeps them current as labels are added, renamed so they stop matching, and deleted", async () => {
    const { ns, pull, clients, expectCurrent } = await tracker();
    const bug = issuesLabelled("bug");
    pull("g", [put("bug", bug)]);
    // A label added to an issue: the issue and what makes it pass arrive together.
    ns.sql("INSERT INTO issueLabel VALUES ('i2', 'l1')");
    pull("g");
    expect(clients.get("g")!.keys()).toEqual(BOTH_BY_L1);
    expectCurrent("g", [bug]);
    // A second label named bug: i3 passes through it.
    ns.sql("UPDATE label SET name = 'bug' WHERE id = 'l3'");
    pull("g");
    expectCurrent("g", [bug]);
    expect(clients.get("g")!.keys()).toContain('label/["l3"]');
    // l1 renamed: i1 and i2 stop passing, and their junction rows and l1 leave the client.
    ns.sql("UPDATE label SET name = 'defect' WHERE id = 'l1'");
    pull("g");
    expect(clients.get("g")!.keys()).toEqual(['issue/["i3"]', 'issueLabel/["i3","l3"]', 'label/["l3"]']);
    expectCurrent("g", [bug]);
    // The label deleted (its junction row left behind): nothing passes, nothing is held.
    ns.sql("DELETE FROM label WHERE id = 'l3'");
    pull("g");
    expect(clients.get("g")!.keys()).toEqual([]);
    expectCurrent("g", [bug]);
    // Renamed back and restored: the rows come back.
    ns.sql("UPDATE label SET name = 'bug' WHERE id = 'l1'");
    pull("g");
    expectCurrent("g", [bug]);
    expect(clients.get("g")!.keys()).toEqual(BOTH_BY_L1);
  });

  it("holds the rows of a nested EXISTS, through the label's kind, and follows the kind", async () => {
    const { ns, pull, clients, expectCurrent } = await tracker();
    const defects = issuesWithLabelOfKind("defect");
    pull("g", [put("d", defects)]);
    expect(clients.get("g")!.keys()).toEqual([
      'issue/["i1"]',
      'issue/["i3"]',
      'issueLabel/["i1","l1"]',
      'issueLabel/["i3","l3"]',
      'kind/["k1"]',
      'label/["l1"]',
      'label/["l3"]',
    ]);
    expectCurrent("g", [defects]);
    // The ui label becomes a defect: i2 passes through it, and i1 holds it too.
    ns.sql("UPDATE label SET kindId = 'k1' WHERE id = 'l2'");
    pull("g");
    expectCurrent("g", [defects]);
    expect(clients.get("g")!.keys()).toContain('issueLabel/["i2","l2"]');
    // The kind renamed: nothing passes any more, and every row leaves.
    ns.sql("UPDATE kind SET name = 'flaw' WHERE id = 'k1'");
    pull("g");
    expect(clients.get("g")!.keys()).toEqual([]);
    expectCurrent("g", [defects]);
    ns.sql("INSERT INTO kind VALUES ('k3', 'defect')");
    ns.sql("UPDATE label SET kindId = 'k3' WHERE id = 'l3'");
    pull("g");
    expect(clients.get("g")!.keys()).toEqual([
      'issue/["i3"]',
      'issueLabel/["i3","l3"]',
      'kind/["k3"]',
      'label/["l3"]',
    ]);
    expectCurrent("g", [defects]);
  });

  it("holds at most three rows per issue, in the subquery's order, and takes the next when one goes", async () => {
    const { ns, pull, clients, expectCurrent } = await tracker();
    ns.sql(
      "INSERT INTO comment VALUES ('c1', 'i1', 'u1'), ('c2', 'i1', 'u1'), ('c3', 'i1', 'u2'), ('c4', 'i1', 'u1'), ('c5', 'i1', 'u1'), ('c6', 'i2', 'u1')",
    );
    const byU1 = issuesCommentedBy("u1");
    pull("g", [put("u1", byU1)]);
    const comments = () =>
      clients
        .get("g")!
        .keys()
        .filter((key) => key.startsWith("comment/"));
    expect(comments()).toEqual(['comment/["c1"]', 'comment/["c2"]', 'comment/["c4"]', 'comment/["c6"]']);
    expectCurrent("g", [byU1]);
    ns.sql("DELETE FROM comment WHERE id = 'c2'");
    pull("g");
    expect(comments()).toEqual(['comment/["c1"]', 'comment/["c4"]', 'comment/["c5"]', 'comment/["c6"]']);
    ns.sql("UPDATE comment SET authorId = 'u2' WHERE id = 'c6'");
    pull("g");
    expect(comments()).toEqual(['comment/["c1"]', 'comment/["c4"]', 'comment/["c5"]']);
    expectCurrent("g", [byU1]);
  });

  it("keeps a row another query holds when its condition lets go, counting both", async () => {
    const { ns, pull, clients, expectCurrent } = await tracker();
    const bug = issuesLabelled("bug");
    const labels: QueryAST = { table: "label" };
    pull("g", [put("bug", bug), put("labels", labels)]);
    expectCurrent("g", [bug, labels]);
    ns.sql("DELETE FROM issueLabel WHERE issueId = 'i1' AND labelId = 'l1'");
    pull("g");
    // i1 goes with its junction row; l1 stays, the other query holds it.
    expect(clients.get("g")!.keys()).toEqual(['label/["l1"]', 'label/["l2"]', 'label/["l3"]']);
    expectCurrent("g", [bug, labels]);
    pull("g", [{ op: "del", hash: "labels" }]);
    expect(clients.get("g")!.keys()).toEqual([]);
  });

  it("holds a membership row that makes an issue visible, only the caller's own", async () => {
    const own = (userID: string): Visibility => ({ member: { sql: "userId = ?", params: [userID] } });
    const { ns, clients, fresh, roots } = await tracker();
    ns.sql("INSERT INTO member VALUES ('p1', 'ann'), ('p1', 'bo'), ('p2', 'bo')");
    const as = (group: string, user: string, patch: QueryPatchOp[] = []) => {
      const client = clients.get(group) ?? new ClientRows();
      clients.set(group, client);
      const result = ns.pull({
        cookie: client.cookie,
        clientGroupID: group,
        queries: { patch },
        visibility: own(user),
      });
      if (!result.json.unchanged) client.apply(result.json as never, issueSchema);
      return client;
    };
    const check = (group: string, user: string) => {
      const client = clients.get(group)!;
      const ast = issuesOfMember(user);
      expect(client.keys()).toEqual(fresh([ast], own(user)));
      expect(localView(ast, byTable(client))).toEqual(roots(ast, own(user)));
    };
    as("ann", "ann", [put("mine", issuesOfMember("ann"))]);
    as("bo", "bo", [put("mine", issuesOfMember("bo"))]);
    expect(clients.get("ann")!.keys()).toEqual(['issue/["i1"]', 'issue/["i2"]', 'member/["p1","ann"]']);
    expect(clients.get("bo")!.keys()).toContain('member/["p2","bo"]');
    check("ann", "ann");
    check("bo", "bo");
    ns.sql("INSERT INTO member VALUES ('p2', 'ann')");
    as("ann", "ann");
    check("ann", "ann");
    expect(clients.get("ann")!.keys()).toContain('member/["p2","ann"]');
    ns.sql("DELETE FROM member WHERE userId = 'ann' AND projectId = 'p1'");
    as("ann", "ann");
    expect(clients.get("ann")!.keys()).toEqual(['issue/["i3"]', 'issue/["i4"]', 'member/["p2","ann"]']);
    check("ann", "ann");
    // Nobody's membership but one's own ever reached a client.
    for (const key of clients.get("ann")!.keys()) expect(key).not.toContain('"bo"]');
  });
});
