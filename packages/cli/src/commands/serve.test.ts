import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BENCH_CONFIG, postJson } from "../../test/test-server.js";
import { runWeir, startWeir } from "../../test/weir-process.js";

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "weir-init-"));
  dirs.push(dir);
  return dir;
}

describe("weir init then weir serve", () => {
  it("scaffolds a project whose server syncs rows over HTTP and stops cleanly on SIGTERM", async () => {
    const dir = join(tempDir(), "app");
    const init = await runWeir(["init", dir]);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("created weir.config.js");

    const serve = startWeir(["serve", "--port", "0", "--json"], { cwd: dir });
    const { url } = JSON.parse(await serve.waitForLine(/^\{"url":/)) as { url: string };
    try {
      const push = await postJson(
        `${url}/notes/push`,
        {
          clientGroupID: "g-alice",
          pushVersion: 1,
          mutations: [
            {
              type: "custom",
              id: 1,
              clientID: "c-alice",
              name: "createNote",
              args: [{ id: "n1", text: "hello" }],
            },
            {
              type: "custom",
              id: 2,
              clientID: "c-alice",
              name: "updateNote",
              args: [{ id: "n1", done: true }],
            },
          ],
        },
        { authorization: "alice" },
      );
      expect(push.status).toBe(200);
      expect(push.body).toEqual({
        pushResponse: {
          mutations: [
            { id: { clientID: "c-alice", id: 1 }, result: {} },
            { id: { clientID: "c-alice", id: 2 }, result: {} },
          ],
        },
      });
      const pull = await postJson(
        `${url}/notes/pull`,
        { clientGroupID: "g-alice", clientID: "c-alice", cookie: null },
        { authorization: "alice" },
      );
      expect(pull.body).toMatchObject({
        lastMutationIDChanges: { "c-alice": 2 },
        rowsPatch: [
          { op: "clear" },
          { op: "put", tableName: "note", value: { id: "n1", owner: "alice", text: "hello", done: true } },
        ],
      });
      // The sample visibility hides alice's note from bob.
      const bob = await postJson(
        `${url}/notes/replicache/pull`,
        { pullVersion: 1, clientGroupID: "g-bob", cookie: null, profileID: "p", schemaVersion: "" },
        { authorization: "bob" },
      );
      expect(bob.body).toMatchObject({ patch: [{ op: "clear" }] });
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect(await serve.exited).toBe(0);
    expect(existsSync(join(dir, ".data", "notes.sqlite"))).toBe(true);
  });

  it("refuses to overwrite: a second init changes nothing and exits 1", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "existing", scripts: { test: "true" } }));
    const first = await runWeir(["init", dir, "--json"]);
    expect(first.code).toBe(0);
    // A CommonJS package gets an .mjs config, and the script points at it.
    expect(JSON.parse(first.stdout)).toMatchObject({
      created: ["weir.config.mjs", ".gitignore"],
      updated: ["package.json"],
    });
    const files = () =>
      Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), "utf8")]));
    const before = files();
    expect(JSON.parse(before["package.json"]!).scripts).toEqual({
      test: "true",
      serve: "weir serve --config weir.config.mjs",
    });
    const second = await runWeir(["init", dir, "--json"]);
    expect(second.code).toBe(1);
    expect(JSON.parse(second.stdout)).toMatchObject({ error: "exists" });
    expect(files()).toEqual(before);
  });
});

describe("weir serve", () => {
  it("loads a TypeScript config and prints its URL in human form", async () => {
    const config = `import type {} from "node:fs";
interface Item { id: string; value: number }
const put = (tx: { upsert(table: string, row: Item): void }, args: Item): void => tx.upsert("item", args);
export default {
  schema: { tables: { item: { columns: { id: "string", value: "number" }, primaryKey: ["id"] } } },
  mutators: { put },
  devAuth: true,
};
`;
    const dir = tempDir();
    writeFileSync(join(dir, "weir.config.ts"), config);
    const serve = startWeir(["serve", "--port", "0"], { cwd: dir });
    const line = await serve.waitForLine(/^weir listening on /);
    const url = line.replace("weir listening on ", "").trim();
    try {
      const push = await postJson(
        `${url}/ts/push`,
        {
          clientGroupID: "g",
          pushVersion: 1,
          mutations: [{ type: "custom", id: 1, clientID: "c", name: "put", args: [{ id: "a", value: 1.5 }] }],
        },
        { authorization: "u" },
      );
      expect(push.body).toMatchObject({ pushResponse: { mutations: [{ result: {} }] } });
    } finally {
      serve.child.kill("SIGINT");
    }
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toContain("weir: stopped");
  });

  it("--memory keeps the databases in memory: nothing is written to the data directory", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "weir.config.mjs"), BENCH_CONFIG);
    const serve = startWeir(["serve", "--port", "0", "--memory", "--json"], { cwd: dir });
    const started = JSON.parse(await serve.waitForLine(/^\{"url":/)) as { url: string; dataDir: unknown };
    expect(started.dataDir).toBeNull();
    try {
      const push = await postJson(
        `${started.url}/mem/push`,
        {
          clientGroupID: "g",
          pushVersion: 1,
          mutations: [
            { type: "custom", id: 1, clientID: "c", name: "benchPut", args: [{ id: "a", value: 1 }] },
          ],
        },
        { authorization: "u" },
      );
      expect(push.status).toBe(200);
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect(await serve.exited).toBe(0);
    expect(existsSync(join(dir, ".data"))).toBe(false);
  });

  it("--data-dir puts the namespace files where it says", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "weir.config.mjs"), BENCH_CONFIG);
    const serve = startWeir(["serve", "--port", "0", "--data-dir", "dbs", "--json"], { cwd: dir });
    const started = JSON.parse(await serve.waitForLine(/^\{"url":/)) as { url: string; dataDir: string };
    expect(started.dataDir).toBe(join(dir, "dbs"));
    try {
      await postJson(
        `${started.url}/here/pull`,
        { clientGroupID: "g", clientID: "c", cookie: null },
        { authorization: "u" },
      );
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect(await serve.exited).toBe(0);
    expect(existsSync(join(dir, "dbs", "here.sqlite"))).toBe(true);
  });

  it("--workers runs the namespaces in that many threads, each namespace's rows where its pushes went", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "weir.config.mjs"), BENCH_CONFIG);
    const serve = startWeir(["serve", "--port", "0", "--workers", "3", "--json"], { cwd: dir });
    const started = JSON.parse(await serve.waitForLine(/^\{"url":/)) as { url: string; workers: number };
    expect(started.workers).toBe(3);
    try {
      const names = ["ns-a", "ns-b", "ns-c", "ns-d", "ns-e", "ns-f"];
      for (const [i, ns] of names.entries()) {
        const push = await postJson(
          `${started.url}/${ns}/push`,
          {
            clientGroupID: "g",
            pushVersion: 1,
            mutations: [
              { type: "custom", id: 1, clientID: "c", name: "benchPut", args: [{ id: ns, value: i }] },
            ],
          },
          { authorization: "u" },
        );
        expect(push.status).toBe(200);
      }
      for (const [i, ns] of names.entries()) {
        const pull = await postJson(
          `${started.url}/${ns}/pull`,
          { clientGroupID: "g", clientID: "c", cookie: null },
          { authorization: "u" },
        );
        expect(pull.body).toMatchObject({
          lastMutationIDChanges: { c: 1 },
          rowsPatch: [{ op: "clear" }, { op: "put", value: { id: ns, value: i } }],
        });
      }
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect(await serve.exited).toBe(0);
    for (const ns of ["ns-a", "ns-f"]) expect(existsSync(join(dir, ".data", `${ns}.sqlite`))).toBe(true);
  });

  it("fails with exit 1 and every problem listed for an invalid config", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "weir.config.mjs"),
      "export default { schema: { tables: {} }, mutators: {}, devAuth: true };\n",
    );
    const run = await runWeir(["serve", "--port", "0"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("invalid weir config");
    expect(run.stderr).toContain("schema");
  });

  it("fails with exit 1 without a config file", async () => {
    const run = await runWeir(["serve", "--port", "0", "--json"], { cwd: tempDir() });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ error: "config_not_found" });
  });

  it("fails with exit 1 when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const dir = tempDir();
    writeFileSync(join(dir, "weir.config.mjs"), BENCH_CONFIG);
    try {
      const run = await runWeir(["serve", "--port", String(port)], { cwd: dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port}`);
    } finally {
      blocker.close();
    }
  });
});
