import { afterEach, expect, it } from "vitest";
import { issueClient, mutators, queries } from "./issues-app.js";
import { socketTrace } from "./zero-client.js";

// A query with relationships and no limit (every issue with its labels through the junction
// table, and each label's kind), against a running weir host (Node, or the edge in workerd): the
// stock Zero client's view of it must end whole, each issue with its labels, though the labels and
// kinds are shared by many issues (on Node with no time for answers, read in ranges of its issues,
// a part each); and after another client's writes (a label renamed, moved between issues, given
// another kind), which the server brings in from the rows they can have moved, the view must show
// them.

const ISSUES = 2_600;
const LABELS = ["bug", "ui", "crash"];

/** Issue i's labels: one or two of the three. */
const labelsOf = (i: number) => (i % 4 === 0 ? [LABELS[i % 3]!, LABELS[(i + 1) % 3]!] : [LABELS[i % 3]!]);
const issueId = (i: number) => `i${String(i).padStart(5, "0")}`;

type Put = { table: string; row: Record<string, string> };

/** The writer's last mutation id in the case's namespace. */
let pushed = 0;

/** `puts` pushed over HTTP in one push as user `writer`. */
async function pushPuts(url: string, puts: Put[]) {
  await pushMutations(
    url,
    puts.map((put) => ({ name: "put", args: put })),
  );
}

/** `mutations` pushed over HTTP in one push as user `writer`. */
async function pushMutations(url: string, mutations: Array<{ name: string; args: unknown }>) {
  const response = await fetch(`${url}/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "writer" },
    body: JSON.stringify({
      clientGroupID: "seed",
      pushVersion: 1,
      mutations: mutations.map(({ name, args }) => ({
        type: "custom",
        id: ++pushed,
        clientID: "seed-c",
        name,
        args: [args],
        timestamp: 1,
      })),
    }),
  });
  expect(response.status).toBe(200);
}

type Issue = { id: string; labels: Array<{ name: string; kind?: { name: string } }> };

/**
 * Registers the case against the host at `url()`, which serves the tracker's config
 * (test/issues-app.ts) at any namespace: in a namespace of its own.
 */
export function zeroRelatedSuite(url: () => string): void {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("sees every issue with its labels and their kinds, and writes to them after", async () => {
    const base = `${url()}/related-${Date.now()}`;
    pushed = 0;
    const puts: Put[] = [
      { table: "kind", row: { id: "k1", name: "defect" } },
      { table: "kind", row: { id: "k2", name: "idea" } },
      ...LABELS.map((name, i) => ({
        table: "label",
        row: { id: `l${i}`, name, kindId: i === 1 ? "k2" : "k1" },
      })),
    ];
    for (let i = 0; i < ISSUES; i++) {
      puts.push({ table: "issue", row: { id: issueId(i), projectId: "p1", title: `Issue ${i}` } });
      for (const name of labelsOf(i))
        puts.push({ table: "issueLabel", row: { issueId: issueId(i), labelId: `l${LABELS.indexOf(name)}` } });
    }
    await pushPuts(base, puts);

    const reader = issueClient(base, "ann", `related-ranges-${Date.now()}`);
    closers.push(() => reader.close());
    const view = reader.materialize(queries.withLabels());
    let latest: { issues: Issue[]; complete: boolean } = { issues: [], complete: false };
    const changed = new Set<() => void>();
    view.addListener((data, resultType) => {
      latest = { issues: structuredClone(data as Issue[]), complete: resultType === "complete" };
      for (const wake of changed) wake();
    });
    const until = (done: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `the view held ${latest.issues.length} issues; the reader's sockets:\n${socketTrace(reader.clientID)}`,
              ),
            ),
          30_000,
        );
        const check = () => {
          if (!done()) return;
          changed.delete(check);
          clearTimeout(timer);
          resolve();
        };
        changed.add(check);
        check();
      });
    const expected = (renamed?: string) =>
      Array.from({ length: ISSUES }, (_, i) => ({
        id: issueId(i),
        labels: labelsOf(i)
          .map((name) => ({
            name: name === "bug" && renamed ? renamed : name,
            kind: name === "ui" ? "idea" : "defect",
          }))
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
      }));
    const seen = () =>
      latest.issues.map((issue) => ({
        id: issue.id,
        labels: issue.labels
          .map((label) => ({ name: label.name, kind: label.kind?.name }))
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
      }));
    await until(() => latest.complete && latest.issues.length === ISSUES);
    expect(seen()).toEqual(expected());

    // A label every range's issues share, renamed: each issue that has it shows the new name.
    const renamed = reader.mutate(
      mutators.put({ table: "label", row: { id: "l0", name: "defect", kindId: "k1" } }),
    );
    expect(await renamed.server).toEqual({ type: "success" });
    await until(
      () => latest.complete && latest.issues.some((issue) => issue.labels.some((l) => l.name === "defect")),
    );
    await until(() => JSON.stringify(seen()) === JSON.stringify(expected("defect")));

    // Another client's writes, which this one sees only from the server: a label taken off one
    // issue and put on another, and a label whose kind changes (the rows they move are brought up
    // to date from the changed rows, not the query evaluated again).
    await pushMutations(base, [
      { name: "remove", args: { table: "issueLabel", key: { issueId: issueId(1), labelId: "l1" } } },
      { name: "put", args: { table: "issueLabel", row: { issueId: issueId(2), labelId: "l0" } } },
      { name: "put", args: { table: "label", row: { id: "l2", name: "crash", kindId: "k2" } } },
    ]);
    const moved = expected("defect").map((issue) => ({
      id: issue.id,
      labels: [
        ...(issue.id === issueId(1) ? [] : issue.labels),
        ...(issue.id === issueId(2) ? [{ name: "defect", kind: "defect" }] : []),
      ]
        .map((label) => (label.name === "crash" ? { ...label, kind: "idea" } : label))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    }));
    await until(() => JSON.stringify(seen()) === JSON.stringify(moved));
    view.destroy();
  }, 60_000);
}
