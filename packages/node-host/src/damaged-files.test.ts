import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import {
  admin,
  type ConformanceTarget,
  conformanceConfig,
  CONFORMANCE_ADMIN_KEY as KEY,
  NativeClient,
} from "@weir/conformance";
import { describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer, type NodeHostOptions, type WeirServer } from "./index.js";

const NS = "damaged";

/** A server on `dataDir`, as a conformance target, with its logger. */
async function start(dataDir: string, options: Partial<NodeHostOptions> = {}) {
  const logger = memoryLogger();
  const server: WeirServer = createServer({
    ...conformanceConfig(),
    devAuth: true,
    dataDir,
    logger,
    ...options,
  });
  const { url } = await server.listen();
  const target: ConformanceTarget = { url, auth: (user) => user, close: () => server.close() };
  return { server, target, logger };
}

/** A namespace with a few hundred rows, cleanly closed; answers the client that wrote them. */
async function written(dataDir: string): Promise<NativeClient> {
  const { target } = await start(dataDir);
  const client = new NativeClient(target, NS, "alice");
  for (let batch = 0; batch < 4; batch++) {
    const mutations = Array.from({ length: 100 }, (_, i) => ({
      name: "createTodo",
      args: { id: `t${batch}-${i}`, text: "x".repeat(500) },
    }));
    expect((await client.push(mutations)).status).toBe(200);
  }
  await client.sync();
  await target.close();
  const file = join(dataDir, `${NS}.sqlite`);
  // The last connection to close removes the WAL: the file alone holds the namespace.
  for (let i = 0; i < 200 && existsSync(`${file}-wal`); i++) await new Promise((r) => setTimeout(r, 10));
  expect(existsSync(`${file}-wal`)).toBe(false);
  return client;
}

function overwrite(file: string, offset: number, bytes: number): void {
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.alloc(bytes, 0xa5), 0, bytes, offset);
  closeSync(fd);
}

const digest = (file: string) =>
  existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : "none";

const DAMAGES: Array<[string, (file: string) => void]> = [
  ["truncated to half", (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
  ["a garbage header", (file) => overwrite(file, 0, 100)],
  [
    "64 KB of garbage mid-file",
    (file) => overwrite(file, Math.floor(statSync(file).size / 2 / 4096) * 4096, 64 * 1024),
  ],
  ["truncated to 0 bytes", (file) => truncateSync(file, 0)],
  ["deleted", (file) => unlinkSync(file)],
];

describe("a namespace whose file was damaged", () => {
  it.each(DAMAGES)(
    "%s: refused with 503 for pulls and pushes, nothing written, logged once",
    async (_, damage) => {
      const dataDir = tempDir();
      const before = await written(dataDir);
      const file = join(dataDir, `${NS}.sqlite`);
      damage(file);
      const damaged = digest(file);

      const { target, logger } = await start(dataDir);
      try {
        const client = new NativeClient(target, NS, "alice", before.clientGroupID, before.clientID);
        client.cookie = before.cookie;
        client.nextMutationID(before.lastMutationID + 1);
        for (let i = 0; i < 3; i++) {
          const pulled = await client.pull();
          expect(pulled.status, JSON.stringify(pulled.json)).toBe(503);
          expect(pulled.json).toMatchObject({ error: "namespace_unavailable", message: expect.any(String) });
          expect(JSON.stringify(pulled.json)).not.toContain(dataDir);
          const pushed = await client.push([{ name: "createTodo", args: { id: `new-${i}` } }]);
          expect(pushed.status).toBe(503);
          expect(pushed.json).toMatchObject({ error: "namespace_unavailable" });
          expect((await new NativeClient(target, NS, "bob").pull()).status).toBe(503);
        }
        expect(digest(file)).toBe(damaged);
        expect(existsSync(`${file}-wal`) && statSync(`${file}-wal`).size > 0).toBe(false);

        // Once in the log, with the file; the status route and the metrics show it.
        const logged = logger.lines.filter((line) => line.msg === "namespace unavailable");
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({ level: "error", file, reason: expect.any(String) });
        const status = await admin(target, NS, "status", KEY);
        expect(status.status).toBe(503);
        expect(status.json).toMatchObject({ error: "namespace_unavailable", reason: logged[0]!.reason });
        const metrics = await (await fetch(`${target.url}/metrics`)).text();
        expect(metrics).toMatch(/^weir_unavailable_namespaces 1$/m);

        // Other namespaces are served as ever.
        const other = new NativeClient(target, "healthy", "alice");
        expect((await other.push([{ name: "createTodo", args: { id: "h1" } }])).status).toBe(200);
        await other.sync();
        expect(other.rows.size).toBe(1);
      } finally {
        await target.close();
      }
    },
  );
});

describe("a full disk (the database's size capped with max_page_count)", () => {
  it("answers pushes 507 and stores nothing of them, serves pulls, and takes writes once there is room", async () => {
    const dataDir = tempDir();
    let { target } = await start(dataDir, { maxDatabaseBytes: 512 * 1024 });
    const client = new NativeClient(target, "full", "alice");
    let refused: Awaited<ReturnType<NativeClient["push"]>> | undefined;
    let stored = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      const args = { id: `t${i}`, text: "x".repeat(4000) };
      const answer = await client.push([{ name: "createTodo", args }]);
      if (answer.status === 200) stored++;
      else refused = answer;
    }
    expect(refused?.status).toBe(507);
    expect(refused?.json).toMatchObject({ error: "quota_exceeded", message: expect.any(String) });
    expect(stored).toBeGreaterThan(0);
    // Nothing of the refused push: the rows and the client's last id are those acknowledged.
    await client.sync();
    expect(client.rows.size).toBe(stored);
    expect(client.lastMutationID).toBe(stored);
    expect((await client.pull()).status).toBe(200);
    await target.close();

    ({ target } = await start(dataDir, { maxDatabaseBytes: 64 * 1024 * 1024 }));
    const again = new NativeClient(target, "full", "alice", client.clientGroupID, client.clientID);
    again.nextMutationID(stored + 1);
    expect((await again.push([{ name: "createTodo", args: { id: "after" } }])).status).toBe(200);
    await again.sync();
    expect(again.rows.size).toBe(stored + 1);
    await target.close();
  });
});
