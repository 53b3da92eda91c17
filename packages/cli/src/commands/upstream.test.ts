import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, runWeir, startWeir } from "../../test/weir-process.js";

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-cli-upstream-"));
  await db.sql("CREATE TABLE todo (id int PRIMARY KEY, org text NOT NULL, title text NOT NULL)");
  // 'Acme Corp' is no namespace name: its row can never be served, and start says so.
  await db.sql("INSERT INTO todo VALUES (1, 'acme', 'one'), (2, 'globex', 'two'), (3, 'Acme Corp', 'three')");
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("weir upstream postgres", () => {
  it("serves a tenant's rows over the upstream contract, behind the token, stops on SIGTERM, and --drop removes the slot", async () => {
    const buffer = join(dir, "buffer.sqlite");
    const serve = startWeir(
      [
        "upstream",
        "postgres",
        "--database-url",
        db.url,
        "--tables",
        "todo",
        "--tenant-column",
        "org",
        "--set-replica-identity",
        "--port",
        "0",
        "--buffer",
        buffer,
        "--json",
      ],
      { env: { WEIR_UPSTREAM_TOKEN: "tok" } },
    );
    const started = JSON.parse(await serve.waitForLine(/^\{"url":/)) as {
      url: string;
      slot: string;
      buffer: string;
    };
    expect(started).toMatchObject({ slot: "weir", buffer, tables: ["todo"], unservableTenantRows: 1 });
    try {
      const auth = { authorization: "Bearer tok" };
      const page = await fetch(`${started.url}/acme/snapshot?table=todo&limit=10`, { headers: auth });
      expect(await page.json()).toMatchObject({
        rows: [{ id: 1, org: "acme", title: "one" }],
        nextCursor: null,
      });
      expect((await fetch(`${started.url}/acme/snapshot?table=todo&limit=10`)).status).toBe(401);
      const status = (await (await fetch(`${started.url}/status`, { headers: auth })).json()) as {
        state: string;
      };
      expect(status.state).toBe("streaming");
      // Its state changes as JSON lines on stderr (stdout keeps the start line alone), written
      // in batches, so the line may follow the status answer by a few milliseconds.
      const connected = JSON.parse(await serve.waitForLine(/"msg":"connected"/, 5_000, "stderr")) as Record<
        string,
        unknown
      >;
      expect(connected).toMatchObject({
        level: "info",
        slot: "weir",
        from: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/),
      });
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect(await serve.exited).toBe(0);

    const drop = await runWeir(["upstream", "postgres", "--database-url", db.url, "--drop", "--json"]);
    expect(drop.code).toBe(0);
    expect(jsonOf(drop)).toEqual({ dropped: { slot: true, publication: true } });
    const again = await runWeir(["upstream", "postgres", "--database-url", db.url, "--drop", "--json"]);
    expect(jsonOf(again)).toEqual({ dropped: { slot: false, publication: false } });
  });

  it("--list-columns lists each table's columns with their weir types, and follows a schema change", async () => {
    await db.sql("CREATE TABLE shape (id bigint PRIMARY KEY, label text, spot point, n int NOT NULL)");
    const listed = async () =>
      jsonOf<{ tables: Record<string, unknown[]> }>(
        await runWeir([
          "upstream",
          "postgres",
          "--database-url",
          db.url,
          "--tables",
          "shape",
          "--list-columns",
          "--json",
        ]),
      ).tables;
    expect(await listed()).toEqual({
      shape: [
        {
          name: "id",
          type: "bigint",
          weirType: "integer",
          nullable: false,
          primaryKey: true,
          generated: false,
        },
        {
          name: "label",
          type: "text",
          weirType: "string",
          nullable: true,
          primaryKey: false,
          generated: false,
        },
        { name: "spot", type: "point", weirType: null, nullable: true, primaryKey: false, generated: false },
        {
          name: "n",
          type: "integer",
          weirType: "integer",
          nullable: false,
          primaryKey: false,
          generated: false,
        },
      ],
    });
    await db.sql(
      "ALTER TABLE shape DROP COLUMN spot, ALTER COLUMN n TYPE text, ADD COLUMN extra numeric DEFAULT 1",
    );
    expect((await listed()).shape).toEqual([
      expect.objectContaining({ name: "id" }),
      expect.objectContaining({ name: "label" }),
      expect.objectContaining({ name: "n", type: "text", weirType: "string" }),
      expect.objectContaining({ name: "extra", type: "numeric", weirType: "string", nullable: true }),
    ]);
    const text = await runWeir([
      "upstream",
      "postgres",
      "--database-url",
      db.url,
      "--tables",
      "shape",
      "--list-columns",
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^shape\n {2}id +integer +bigint +\(primary key\)/);
  });

  it("exits 2 without --tables and 1 with the reason when PostgreSQL refuses", async () => {
    const usage = await runWeir(["upstream", "postgres", "--database-url", db.url, "--json"]);
    expect(usage.code).toBe(2);
    const refused = await runWeir([
      "upstream",
      "postgres",
      "--database-url",
      db.url,
      "--tables",
      "missing",
      "--port",
      "0",
      "--buffer",
      join(dir, "refused.sqlite"),
      "--json",
    ]);
    expect(refused.code).toBe(1);
    expect(jsonOf(refused)).toMatchObject({
      error: "upstream_failed",
      message: expect.stringContaining("missing does not exist"),
    });
  });
});
