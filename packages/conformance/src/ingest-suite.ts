import { expect, it } from "vitest";
import {
  CONFORMANCE_ADMIN_KEY,
  CONFORMANCE_BREAKER_ROWS,
  CONFORMANCE_CHANGES_LIMIT,
  CONFORMANCE_MAX_CHANGE_ROWS,
  CONFORMANCE_NOTIFY_TOKEN,
  CONFORMANCE_PAGE_ROWS,
} from "./conformance-config.js";
import { type Answer, admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { SuiteUpstream } from "./suite-upstream.js";
import type { ConformanceTarget } from "./target.js";
import { Listener, wakeUrl } from "./wake-listener.js";

function notify(t: ConformanceTarget, ns: string, body?: unknown): Promise<Answer> {
  return call(t, "POST", `/${ns}/notify`, {
    headers: { authorization: `Bearer ${CONFORMANCE_NOTIFY_TOKEN}` },
    ...(body === undefined ? {} : { body }),
  });
}

async function upstreamStatus(t: ConformanceTarget, ns: string) {
  return (await admin(t, ns, "status", CONFORMANCE_ADMIN_KEY)).json.upstream;
}

/** The todo ids a client holds, sorted. */
function todoIDs(client: NativeClient): string[] {
  return [...client.rows.values()]
    .filter((row) => typeof row.owner === "string")
    .map((row) => String(row.id))
    .sort();
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`no ${what} in ${ms} ms`)), ms),
    ),
  ]);
}

const todos = (prefix: string, count: number, owner = "alice") =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${String(i).padStart(4, "0")}`,
    owner,
    sort: i,
  }));

/**
 * A namespace that replicates an upstream (the suite's own, over HTTP): namespaces named `up-*`
 * follow it. What the upstream commits reaches pulls and wake sockets; failures of the upstream
 * never reach the clients.
 */
export function ingestSuite(target: () => ConformanceTarget, upstream: () => SuiteUpstream): void {
  /** A fresh replicated namespace, its upstream, and alice synced to its first state. */
  async function replica(prefix = "up-") {
    const t = target();
    const ns = freshNamespace(prefix);
    const source = upstream().namespace(ns);
    source.commitTodos([{ id: "seed", owner: "alice" }]);
    const alice = new NativeClient(t, ns, "alice");
    expect((await notify(t, ns)).status).toBe(200);
    await alice.sync();
    expect(todoIDs(alice)).toEqual(["seed"]);
    return { t, ns, source, alice };
  }

  it("brings what the upstream committed to incremental pulls and wake sockets once notify answers", async () => {
    const { t, ns, source, alice } = await replica();
    const listener = new Listener(wakeUrl(t, ns, "watcher"), await t.auth("alice"));
    await listener.opened;
    const watermark = source.commitTodos(todos("n", 2));
    const answer = await notify(t, ns, { watermark: Number(watermark) });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ watermark: String(watermark), applied: 2, outcome: "complete" });
    expect(await within(listener.next(), 5_000, "wake")).toBe("wake");
    const pages = await alice.sync();
    expect(pages[0]!.json.rowsPatch.map((op: { op: string }) => op.op)).toEqual(["put", "put"]);
    expect(todoIDs(alice)).toEqual(["n-0000", "n-0001", "seed"]);
    listener.close();
  });

  it("wakes only the readers of an ingested change", async () => {
    const { t, ns, source } = await replica();
    const carol = new Listener(wakeUrl(t, ns, "carol-tab"), await t.auth("carol"));
    const dave = new Listener(wakeUrl(t, ns, "dave-tab"), await t.auth("dave"));
    await Promise.all([carol.opened, dave.opened]);
    const watermark = source.commitTodos(todos("c", 2, "carol"));
    expect((await notify(t, ns, { watermark: Number(watermark) })).status).toBe(200);
    expect(await within(carol.next(), 5_000, "wake")).toBe("wake");
    expect(await dave.heardNothing()).toBe(true);
    carol.close();
    dave.close();
  });

  it("polls the upstream while a wake socket is open, without a notify", async () => {
    const { t, ns, source, alice } = await replica();
    const listener = new Listener(wakeUrl(t, ns, "watcher"), await t.auth("alice"));
    await listener.opened;
    source.commitTodos(todos("p", 1));
    expect(await within(listener.next(), 10_000, "wake from a poll")).toBe("wake");
    await alice.sync();
    expect(todoIDs(alice)).toContain("p-0000");
    listener.close();
  });

  it("changes nothing for a batch it already applied", async () => {
    const { t, ns, source, alice } = await replica();
    const watermark = source.commitTodos(todos("r", 3));
    expect((await notify(t, ns)).json.applied).toBe(3);
    await alice.sync();
    const again = await notify(t, ns, { watermark: String(watermark) });
    expect(again.json).toEqual({ watermark: String(watermark), applied: 0, outcome: "complete" });
    const pass = await call(t, "POST", `/${ns}/admin/ingest`, { adminKey: CONFORMANCE_ADMIN_KEY });
    expect(pass.json).toMatchObject({ outcome: "complete", rows: 0, cursorAfter: String(watermark) });
    expect((await alice.pull()).json.unchanged).toBe(true);
  });

  it("shows an upstream transaction whole or not at all", async () => {
    const { t, ns, source, alice } = await replica();
    await alice.sync();
    source.commitTodos(todos("tx", 30));
    const notified = notify(t, ns);
    let done = false;
    notified.then(() => {
      done = true;
    });
    const seen: number[] = [];
    while (!done) {
      const before = todoIDs(alice).filter((id) => id.startsWith("tx-")).length;
      const answer = await alice.pull();
      alice.apply(answer.json);
      seen.push(todoIDs(alice).filter((id) => id.startsWith("tx-")).length - before);
    }
    expect((await notified).status).toBe(200);
    await alice.sync();
    for (const count of seen) expect([0, 30]).toContain(count);
    expect(todoIDs(alice).filter((id) => id.startsWith("tx-"))).toHaveLength(30);
  });

  it("brings a batch larger than a pull's cap over several pulls, equal to what a new client gets", async () => {
    const { t, ns, source, alice } = await replica();
    // Six upstream transactions of 30 rows: a changes page (its limit is 40, and it finishes the
    // transaction it is in) holds two, so they arrive as three versions of 60 rows, and a pull
    // (capped at 50 rows, cut between versions) takes one version at a time.
    expect(CONFORMANCE_CHANGES_LIMIT).toBeLessThan(60);
    expect(CONFORMANCE_MAX_CHANGE_ROWS).toBeLessThan(120);
    for (let tx = 0; tx < 6; tx++) source.commitTodos(todos(`big${tx}`, 30));
    expect((await notify(t, ns)).json.applied).toBe(180);
    const pages = await alice.sync();
    const withRows = pages.filter((page) => (page.json.rowsPatch ?? []).length > 0);
    expect(withRows.length).toBeGreaterThanOrEqual(3);
    const fresh = new NativeClient(t, ns, "alice");
    await fresh.sync();
    expect(todoIDs(alice)).toHaveLength(181);
    expect([...alice.rows.entries()].sort()).toEqual([...fresh.rows.entries()].sort());
  });

  it("only moves the cursor for tables the app does not model", async () => {
    const { t, ns, source, alice } = await replica();
    const cookie = alice.cookie;
    const watermark = source.commit((db) => {
      db.prepare("INSERT INTO audit (id, what) VALUES (1, 'login')").run();
    });
    expect((await notify(t, ns)).json).toEqual({
      watermark: String(watermark),
      applied: 0,
      outcome: "complete",
    });
    expect((await upstreamStatus(t, ns)).cursor).toBe(String(watermark));
    const answer = await alice.pull();
    expect(answer.json).toEqual({ cookie, unchanged: true });
  });

  it("applies visibility to ingested rows", async () => {
    const { t, ns, source, alice } = await replica();
    source.commitTodos([
      { id: "mine", owner: "alice" },
      { id: "his", owner: "bob" },
    ]);
    await notify(t, ns);
    const bob = new NativeClient(t, ns, "bob");
    await Promise.all([alice.sync(), bob.sync()]);
    expect(todoIDs(alice)).toEqual(["mine", "seed"]);
    expect(todoIDs(bob)).toEqual(["his"]);
  });

  it("stops on schema drift without applying any of the batch, and says so in status", async () => {
    const t = target();
    const ns = freshNamespace("up-drift");
    const source = upstream().namespace(ns);
    source.commit((db) => {
      db.prepare("INSERT INTO card (id, uid, score, flag) VALUES (1, 1, 0.5, 0)").run();
    });
    expect((await notify(t, ns)).status).toBe(200);
    const carol = new NativeClient(t, ns, "1");
    await carol.sync();
    expect(carol.rows.size).toBe(1);
    source.commit((db) => {
      db.prepare("INSERT INTO card (id, uid, score, flag) VALUES (2, 1, 0.25, 0)").run();
      db.prepare(
        "INSERT INTO todo (id, owner, text, done, sort, color) VALUES ('x', '1', '', 0, 0, 'red')",
      ).run();
    });
    const drifted = await notify(t, ns);
    expect(drifted.status).toBe(409);
    expect(drifted.json.error).toBe("schema_drift");
    expect(drifted.json.message).toContain("color");
    const status = await upstreamStatus(t, ns);
    expect(status.stopped).toMatchObject({ code: "schema_drift" });
    const stale = await carol.pull();
    expect(stale.json.unchanged).toBe(true);
    // The replica no longer follows its upstream: pulls say so until an operator reopens it.
    expect(stale.headers.get("weir-ingest-stopped")).toBe("schema_drift");
    // Stopped: no pass runs (no upstream call) until an operator reopens it.
    const calls = source.calls.length;
    expect((await notify(t, ns)).status).toBe(409);
    expect(source.calls.length).toBe(calls);
    const reopened = await call(t, "POST", `/${ns}/admin/breaker/reopen`, {
      adminKey: CONFORMANCE_ADMIN_KEY,
    });
    expect(reopened.json).toEqual({ reopened: true, wasOpen: true });
    expect((await upstreamStatus(t, ns)).stopped).toBeNull();
    expect((await carol.pull()).headers.get("weir-ingest-stopped")).toBeNull();
  });

  it("takes a new snapshot when the upstream no longer keeps its cursor, clients syncing the old state until it is in", async () => {
    const { t, ns, source, alice } = await replica("up-gone");
    // The upstream keeps 3 watermarks: five commits leave the namespace's cursor behind.
    for (let i = 0; i < 5; i++) source.commitTodos([{ id: `g${i}`, owner: "alice" }]);
    source.snapshotDelayMs = 300;
    const notified = notify(t, ns);
    await waitUntil(async () => (await upstreamStatus(t, ns)).snapshot !== null, "a snapshot generation");
    const during = await alice.pull();
    expect(during.status).toBe(200);
    expect(during.json.unchanged).toBe(true);
    expect((await notified).status).toBe(200);
    source.snapshotDelayMs = 0;
    const after = await alice.pull();
    expect(after.json.rowsPatch[0]).toEqual({ op: "clear" });
    alice.apply(after.json);
    await alice.sync();
    expect(todoIDs(alice)).toEqual(["g0", "g1", "g2", "g3", "g4", "seed"]);
  });

  it("asks a snapshot page refused with a 5xx again with half the rows, down to 100", async () => {
    const t = target();
    const ns = freshNamespace("up-");
    const source = upstream().namespace(ns);
    source.commitTodos(todos("s", 450));
    source.snapshotRowLimit = 150;
    expect((await notify(t, ns)).status).toBe(200);
    const limits = source.calls.filter((c) => c.route === "snapshot").map((c) => c.limit);
    expect(limits.slice(0, 3)).toEqual([CONFORMANCE_PAGE_ROWS, CONFORMANCE_PAGE_ROWS / 2, 100]);
    expect(limits.slice(3).every((limit) => limit === 100)).toBe(true);
    const alice = new NativeClient(t, ns, "alice");
    await alice.sync();
    expect(todoIDs(alice)).toHaveLength(450);
  });

  it("opens the breaker past its row budget, keeps it open across a restart, and closes it on request", async () => {
    const { t, ns, source, alice } = await replica();
    source.commitTodos(todos("flood", CONFORMANCE_BREAKER_ROWS + 1));
    const tripped = await notify(t, ns);
    expect(tripped.status).toBe(503);
    expect(tripped.json.error).toBe("ingest_paused");
    expect(Number(tripped.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const open = (await upstreamStatus(t, ns)).breaker.open;
    expect(open).toMatchObject({ reason: "budget_exceeded", trips: 1 });
    // Clients still sync from the replica.
    expect((await alice.pull()).status).toBe(200);
    if (t.restart) {
      // Stored with the namespace: the same breaker after a restart. (Once its retry time has
      // passed, the next pass may go, and closes it if it succeeds.)
      await t.restart();
      expect((await upstreamStatus(t, ns)).breaker.open).toEqual(open);
    }
    const reopened = await call(t, "POST", `/${ns}/admin/breaker/reopen`, {
      adminKey: CONFORMANCE_ADMIN_KEY,
    });
    expect(reopened.json).toEqual({ reopened: true, wasOpen: true });
    source.commitTodos([{ id: "after", owner: "alice" }]);
    expect((await notify(t, ns)).status).toBe(200);
    expect((await upstreamStatus(t, ns)).breaker.open).toBeNull();
  });

  it("opens the breaker when a batch does not move the cursor", async () => {
    const { t, ns, source } = await replica();
    source.stall = true;
    const stalled = await notify(t, ns);
    expect(stalled.status).toBe(503);
    expect(stalled.json.error).toBe("ingest_paused");
    expect((await upstreamStatus(t, ns)).breaker.open).toMatchObject({ reason: "cursor_stalled" });
    source.stall = false;
    await call(t, "POST", `/${ns}/admin/breaker/reopen`, { adminKey: CONFORMANCE_ADMIN_KEY });
    expect((await notify(t, ns)).status).toBe(200);
  });

  it("waits as long as the upstream's Retry-After asks before calling again", async () => {
    const { t, ns, source, alice } = await replica();
    source.commitTodos([{ id: "later", owner: "alice" }]);
    // Longer than any retry delay of its own (at most 2 s for a first retry).
    source.refusals.push({ route: "changes", status: 503, retryAfterMs: 3_000 });
    const from = source.calls.length;
    expect((await notify(t, ns)).json.applied).toBe(1);
    const [refused, retried] = source.calls.slice(from);
    expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(2_900);
    expect((await upstreamStatus(t, ns)).attempts).toBeGreaterThanOrEqual(source.calls.length - 1);
    await alice.sync();
    expect(todoIDs(alice)).toContain("later");
  });

  it("interleaves pushes and ingest without losing a write", async () => {
    const { t, ns, source, alice } = await replica();
    for (let round = 0; round < 10; round++) {
      source.commitTodos([{ id: `up-${round}`, owner: "alice" }]);
      const [pushed, notified] = await Promise.all([
        alice.push([{ name: "createTodo", args: { id: `push-${round}` } }]),
        notify(t, ns),
      ]);
      expect(pushed.status).toBe(200);
      expect(notified.status).toBe(200);
    }
    await alice.sync();
    const ids = todoIDs(alice);
    for (let round = 0; round < 10; round++)
      expect(ids).toEqual(expect.arrayContaining([`up-${round}`, `push-${round}`]));
    expect(ids).toHaveLength(21);
    const status = await upstreamStatus(t, ns);
    expect(status).toMatchObject({ breaker: { open: null }, stopped: null });
    expect(status.lagMs).toBeGreaterThanOrEqual(0);
  });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
