import { join } from "node:path";
import type { UpstreamSource } from "@weir/protocol";
import { createUpstreamServer, type SqliteUpstream, sqliteUpstream } from "@weir/upstream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ChildServer, startChildServer } from "../test/child-server.js";
import { tempDir } from "../test/helpers.js";

const schema = {
  tables: { todo: { columns: { id: "string", owner: "string", n: "integer" }, primaryKey: ["id"] } },
} as const;
const ADMIN = { "x-admin-key": "replica-admin-key" };
const NOTIFY = { authorization: "Bearer replica-notify-token" };

interface Call {
  route: "changes" | "snapshot";
  cursor: string | null;
}

/** An upstream that answers slowly and records what it was asked. */
class SlowUpstream implements UpstreamSource {
  readonly calls: Call[] = [];
  delayMs = 0;
  /** Runs after each snapshot page is read. */
  afterPage: () => void = () => {};
  constructor(readonly source: SqliteUpstream) {}

  async changes(watermark: bigint, limit: number) {
    this.calls.push({ route: "changes", cursor: String(watermark) });
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return this.source.changes(watermark, limit);
  }

  async snapshotPage(table: string, cursor: string | null, limit: number) {
    this.calls.push({ route: "snapshot", cursor });
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const page = await this.source.snapshotPage(table, cursor, limit);
    this.afterPage();
    return page;
  }
}

const dir = tempDir("weir-replica-");
const upstreams = new Map<string, SlowUpstream>();
const server = createUpstreamServer({ source: (namespace) => upstreams.get(namespace) ?? null });
let upstreamUrl = "";
beforeAll(async () => {
  upstreamUrl = (await server.listen()).url;
});
afterAll(async () => {
  await server.close();
  for (const upstream of upstreams.values()) upstream.source.close();
});

function upstreamFor(namespace: string, rows: number): SlowUpstream {
  const source = sqliteUpstream({ file: join(dir, `${namespace}.sqlite`), schema });
  const insert = source.db.prepare("INSERT INTO todo (id, owner, n) VALUES (?, 'alice', ?)");
  source.db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`t${String(i).padStart(5, "0")}`, i);
  })();
  source.publish();
  const upstream = new SlowUpstream(source);
  upstreams.set(namespace, upstream);
  return upstream;
}

async function json(server: ChildServer, method: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${server.url}${path}`, { method, headers });
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Every todo a new client of the namespace pulls, as `id:n`, sorted. */
async function pullAll(server: ChildServer, namespace: string): Promise<string[]> {
  const rows = new Map<string, number>();
  let cookie: number | null = null;
  for (;;) {
    const response = await fetch(`${server.url}/${namespace}/pull`, {
      method: "POST",
      headers: { authorization: "alice", "content-type": "application/json" },
      body: JSON.stringify({ clientGroupID: `g-${Math.random()}`, clientID: "c", cookie }),
    });
    const answer = (await response.json()) as {
      cookie: number;
      unchanged?: boolean;
      rowsPatch: Array<{ op: string; value: { id: string; n: number }; id: { id: string } }>;
    };
    if (answer.unchanged) break;
    for (const op of answer.rowsPatch) {
      if (op.op === "clear") rows.clear();
      else if (op.op === "put") rows.set(op.value.id, op.value.n);
      else rows.delete(op.id.id);
    }
    cookie = answer.cookie;
  }
  return [...rows].map(([id, n]) => `${id}:${n}`).sort();
}

function upstreamRows(upstream: SlowUpstream): string[] {
  return (upstream.source.db.prepare("SELECT id, n FROM todo").all() as Array<{ id: string; n: number }>)
    .map((row) => `${row.id}:${row.n}`)
    .sort();
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function kill(server: ChildServer): Promise<void> {
  server.child.kill("SIGKILL");
  expect((await server.exited).signal).toBe("SIGKILL");
}

it("resumes a snapshot killed while paging from the page it reached, never serving a half-built table", async () => {
  const dataDir = tempDir();
  const namespace = "paging";
  const upstream = upstreamFor(namespace, 2_000);
  upstream.delayMs = 20;
  let weir = await startChildServer(dataDir, "replica-server.mjs", { WEIR_UPSTREAM_URL: upstreamUrl });
  const fenceBefore = (await json(weir, "GET", `/${namespace}/admin/status`, ADMIN)).body.upstream.fence;
  void fetch(`${weir.url}/${namespace}/notify`, { method: "POST", headers: NOTIFY }).catch(() => {});
  await until(() => upstream.calls.filter((call) => call.route === "snapshot").length >= 5, "five pages");
  await kill(weir);
  const pagesBefore = upstream.calls.length;

  weir = await startChildServer(dataDir, "replica-server.mjs", { WEIR_UPSTREAM_URL: upstreamUrl });
  const status = (await json(weir, "GET", `/${namespace}/admin/status`, ADMIN)).body.upstream;
  expect(status.snapshot).toMatchObject({ state: "paging", table: "todo" });
  expect(status.snapshot.cursor).not.toBeNull();
  expect(status.fence).toBeGreaterThan(fenceBefore);
  // The generation is built aside: clients see the table as it was (empty), not part of it (a
  // pull starts the pass that resumes it, and answers at once).
  expect(await pullAll(weir, namespace)).toEqual([]);

  upstream.delayMs = 0;
  const resumed = await json(weir, "POST", `/${namespace}/notify`, NOTIFY);
  expect(resumed.status).toBe(200);
  // The first page asked after the restart continues from the stored cursor.
  expect(upstream.calls[pagesBefore]).toEqual({ route: "snapshot", cursor: status.snapshot.cursor });
  expect(await pullAll(weir, namespace)).toEqual(upstreamRows(upstream));
  await weir.child.kill("SIGTERM");
  await weir.exited;
});

it("resumes a snapshot killed while catching up, and converges on the upstream", async () => {
  const dataDir = tempDir();
  const namespace = "catchup";
  const upstream = upstreamFor(namespace, 300);
  let weir = await startChildServer(dataDir, "replica-server.mjs", { WEIR_UPSTREAM_URL: upstreamUrl });
  // Sixty upstream transactions land after the first page, so the catch-up has work: six slow
  // pages of it (the server asks ten changes a page).
  upstream.delayMs = 100;
  const update = upstream.source.db.prepare("UPDATE todo SET n = n + 1000 WHERE id = ?");
  upstream.afterPage = () => {
    upstream.afterPage = () => {};
    for (let i = 0; i < 60; i++) {
      update.run(`t${String(i * 5).padStart(5, "0")}`);
      upstream.source.publish();
    }
  };
  void fetch(`${weir.url}/${namespace}/notify`, { method: "POST", headers: NOTIFY }).catch(() => {});
  await until(async () => {
    const status = (await json(weir, "GET", `/${namespace}/admin/status`, ADMIN)).body.upstream;
    return status.snapshot?.state === "catching_up";
  }, "a catch-up");
  await until(() => upstream.calls.filter((call) => call.route === "changes").length >= 2, "catch-up pages");
  await kill(weir);

  weir = await startChildServer(dataDir, "replica-server.mjs", { WEIR_UPSTREAM_URL: upstreamUrl });
  const status = (await json(weir, "GET", `/${namespace}/admin/status`, ADMIN)).body.upstream;
  expect(status.snapshot).toMatchObject({ state: "catching_up" });
  expect(await pullAll(weir, namespace)).toEqual([]);
  upstream.delayMs = 0;
  expect((await json(weir, "POST", `/${namespace}/notify`, NOTIFY)).status).toBe(200);
  expect(await pullAll(weir, namespace)).toEqual(upstreamRows(upstream));
  expect((await json(weir, "GET", `/${namespace}/admin/status`, ADMIN)).body.upstream.snapshot).toBeNull();
  await weir.child.kill("SIGTERM");
  await weir.exited;
});
