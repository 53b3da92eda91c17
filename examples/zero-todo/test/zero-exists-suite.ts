import { afterEach, beforeEach, expect, it } from "vitest";
import { type IssueZero, issueClient, issueZql, mutators, queries } from "./issues-app.js";
import "./zero-client.js";

// The stock Zero client (1.9.0) evaluates a `whereExists` over its own rows: its views of such
// queries hold an issue only if the rows that make the condition hold reached it. Against a
// running weir host (Node, or the edge in workerd), each view must equal a fresh evaluation of the
// data, at first sync and after the rows of the condition's subquery change.

type Row = Record<string, string>;

/**
 * Registers the cases against the host at `url()`, which serves the tracker's config
 * (test/issues-app.ts) at any namespace: each case in a namespace of its own, seeded afresh.
 */
export function zeroExistsSuite(url: () => string): void {
  let base = "";
  let keys = 0;
  const clients: IssueZero[] = [];

  beforeEach(() => {
    base = `${url()}/issues-${++keys}-${Date.now()}`;
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  function client(user: string): IssueZero {
    const z = issueClient(base, user, `k${++keys}-${Date.now()}`);
    clients.push(z);
    return z;
  }

  it("equal a fresh evaluation at first sync and as labels are added, renamed and deleted", async () => {
    const data = await seed(client("writer"));
    const reader = client("ann");
    const view = watch(reader, queries.labelled({ name: "bug" }));
    const bug = () => data.issuesWithLabel((label) => label.name === "bug");
    expect(bug()).toEqual(["i1"]);
    await view.settled(bug());
    // A label added to an issue.
    await data.put("issueLabel", { issueId: "i2", labelId: "l1" });
    expect(bug()).toEqual(["i1", "i2"]);
    await view.settled(bug());
    // Another label renamed so it matches, then the first renamed so it stops matching.
    await data.put("label", { id: "l3", name: "bug", kindId: "k2" });
    await view.settled(bug());
    await data.put("label", { id: "l1", name: "defect", kindId: "k1" });
    expect(bug()).toEqual(["i3"]);
    await view.settled(bug());
    // The last matching label deleted.
    await data.remove("label", { id: "l3" });
    expect(bug()).toEqual([]);
    await view.settled(bug());
    // A label renamed back.
    await data.put("label", { id: "l1", name: "bug", kindId: "k1" });
    await view.settled(bug());
    view.destroy();
  });

  it("equal a fresh evaluation of a nested whereExists, through the label's kind", async () => {
    const data = await seed(client("writer"));
    const reader = client("bo");
    const view = watch(reader, queries.ofKind({ name: "defect" }));
    const defects = () => {
      const kinds = data.kindNamed("defect");
      return data.issuesWithLabel((label) => kinds.has(label.kindId!));
    };
    expect(defects()).toEqual(["i1"]);
    await view.settled(defects());
    // crash becomes a defect: i3 passes.
    await data.put("label", { id: "l3", name: "crash", kindId: "k1" });
    await view.settled(defects());
    // The kind renamed: nothing passes.
    await data.put("kind", { id: "k1", name: "flaw" });
    expect(defects()).toEqual([]);
    await view.settled(defects());
    // A new kind named defect, and ui made one: i1 and i2 pass through it.
    await data.put("kind", { id: "k3", name: "defect" });
    await data.put("label", { id: "l2", name: "ui", kindId: "k3" });
    expect(defects()).toEqual(["i1", "i2"]);
    await view.settled(defects());
    view.destroy();
  });

  it("show an issue through its member's own membership, and only while it lasts", async () => {
    const data = await seed(client("writer"));
    await data.put("member", { projectId: "p1", userId: "cy" });
    await data.put("member", { projectId: "p2", userId: "di" });
    const cy = client("cy");
    const view = watch(cy, queries.mine());
    const mine = (user: string) => {
      const projects = new Set(
        data
          .rows("member")
          .filter((m) => m.userId === user)
          .map((m) => m.projectId),
      );
      return data
        .rows("issue")
        .filter((issue) => projects.has(issue.projectId))
        .map((issue) => issue.id!)
        .sort();
    };
    expect(mine("cy")).toEqual(["i1", "i2"]);
    await view.settled(mine("cy"));
    await data.put("member", { projectId: "p2", userId: "cy" });
    await view.settled(mine("cy"));
    await data.remove("member", { projectId: "p1", userId: "cy" });
    expect(mine("cy")).toEqual(["i3", "i4"]);
    await view.settled(mine("cy"));
    // Another member's membership never reached cy's client.
    const members = (await cy.run(issueZql.member, { type: "unknown" })) as unknown as Row[];
    expect(members.map((m) => m.userId)).toEqual(["cy"]);
    view.destroy();
  });
}

/** The data as the test wrote it, to evaluate the queries afresh. */
class Tracker {
  readonly tables = new Map<string, Map<string, Row>>();

  constructor(private readonly writer: IssueZero) {}

  rows(table: string): Row[] {
    return [...(this.tables.get(table)?.values() ?? [])];
  }

  async put(table: "issue" | "label" | "issueLabel" | "kind" | "member", row: Row): Promise<void> {
    const result = this.writer.mutate(mutators.put({ table, row }));
    expect(await result.server).toEqual({ type: "success" });
    if (!this.tables.has(table)) this.tables.set(table, new Map());
    this.tables.get(table)!.set(JSON.stringify(Object.values(keyOf(table, row))), row);
  }

  async remove(table: "issue" | "label" | "issueLabel" | "kind" | "member", row: Row): Promise<void> {
    const key = keyOf(table, row);
    const result = this.writer.mutate(mutators.remove({ table, key }));
    expect(await result.server).toEqual({ type: "success" });
    this.tables.get(table)!.delete(JSON.stringify(Object.values(key)));
  }

  /** The issues with a label for which `labelPasses` holds, by a fresh evaluation. */
  issuesWithLabel(labelPasses: (label: Row) => boolean): string[] {
    const passing = new Set(
      this.rows("label")
        .filter(labelPasses)
        .map((label) => label.id),
    );
    const labelled = new Set(
      this.rows("issueLabel")
        .filter((link) => passing.has(link.labelId!))
        .map((link) => link.issueId),
    );
    return this.rows("issue")
      .filter((issue) => labelled.has(issue.id))
      .map((issue) => issue.id!)
      .sort();
  }

  kindNamed(name: string): Set<string> {
    return new Set(
      this.rows("kind")
        .filter((kind) => kind.name === name)
        .map((kind) => kind.id!),
    );
  }
}

function keyOf(table: string, row: Row): Row {
  if (table === "issueLabel") return { issueId: row.issueId!, labelId: row.labelId! };
  if (table === "member") return { projectId: row.projectId!, userId: row.userId! };
  return { id: row.id! };
}

/**
 * A view the client keeps materialized (so its query stays subscribed as the data changes) and
 * a wait for its complete rows to be `expected`.
 */
function watch(z: IssueZero, query: unknown) {
  const view = z.materialize(query);
  let latest: { ids: string[]; complete: boolean } = { ids: [], complete: false };
  const waiting = new Set<() => void>();
  view.addListener((data: unknown, resultType: unknown) => {
    const ids = (data as readonly Row[]).map((row) => row.id!);
    latest = { ids, complete: resultType === "complete" };
    for (const wake of waiting) wake();
  });
  const settled = (expected: string[], ms = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (latest.complete && JSON.stringify(latest.ids) === JSON.stringify(expected)) {
          waiting.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`the view held ${JSON.stringify(latest)}, not ${JSON.stringify(expected)}`));
      }, ms);
      waiting.add(check);
      check();
    });
  return { settled, destroy: () => view.destroy() };
}

/** Issues i1-i4 in projects p1 and p2; labels bug (a defect), ui and crash (an idea). */
async function seed(writer: IssueZero): Promise<Tracker> {
  const data = new Tracker(writer);
  await data.put("kind", { id: "k1", name: "defect" });
  await data.put("kind", { id: "k2", name: "idea" });
  await data.put("label", { id: "l1", name: "bug", kindId: "k1" });
  await data.put("label", { id: "l2", name: "ui", kindId: "k2" });
  await data.put("label", { id: "l3", name: "crash", kindId: "k2" });
  for (const [id, projectId] of [
    ["i1", "p1"],
    ["i2", "p1"],
    ["i3", "p2"],
    ["i4", "p2"],
  ] as const)
    await data.put("issue", { id, projectId, title: id });
  await data.put("issueLabel", { issueId: "i1", labelId: "l1" });
  await data.put("issueLabel", { issueId: "i1", labelId: "l2" });
  await data.put("issueLabel", { issueId: "i2", labelId: "l2" });
  await data.put("issueLabel", { issueId: "i3", labelId: "l3" });
  return data;
}
