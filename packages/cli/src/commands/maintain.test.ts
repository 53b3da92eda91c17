import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeNamespaceDb } from "../../test/namespace-db.js";
import { ADMIN_KEY, pushOne, startTestServer } from "../../test/test-server.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";

let dir: string;
let db: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "weir-maintain-"));
  db = join(dir, "app.sqlite");
  await writeNamespaceDb(db, 200, 10);
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function writeLease(pid: number, command = "weir serve --port 4848"): void {
  writeFileSync(
    `${db}.lease`,
    JSON.stringify({ pid, host: hostname(), command, started: new Date().toISOString(), token: "holder" }),
  );
}

function liveProcess(): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  children.push(child);
  return child;
}

describe("weir maintain", () => {
  it("shrinks the change log to the retention in bounded batches, then reports nothing more due", async () => {
    const first = await runWeir([
      "maintain",
      db,
      "--retain",
      "20",
      "--batch-size",
      "50",
      "--max-batches",
      "2",
      "--json",
    ]);
    expect(first.code).toBe(0);
    expect(jsonOf(first)).toMatchObject({
      retainChanges: 20,
      retentionSource: "flag",
      batches: 2,
      deleted: 100,
      more: true,
      changes: { before: 200, after: 100 },
      optimized: true,
    });
    const second = await runWeir(["maintain", db, "--retain", "20", "--batch-size", "50"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/pruned:\s+80 changes in 2 batches/);
    expect(second.stdout).toContain("nothing more is due");
    const inspect = jsonOf(await runWeir(["inspect", db, "--json"]));
    expect(inspect).toMatchObject({ changes: 20, floor: 180, watermark: 200, tables: { item: 10 } });
    // The lease is released when maintain ends.
    expect(existsSync(`${db}.lease`)).toBe(false);
  });

  it("takes the retention from a config file when no flag or stored value names one", async () => {
    const config = join(dir, "weir.config.mjs");
    writeFileSync(config, "export default { retainChanges: 150 };\n");
    const run = await runWeir(["maintain", db, "--config", config, "--json"]);
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({
      retainChanges: 150,
      retentionSource: "config",
      deleted: 50,
      more: false,
    });
  });

  it("refuses with exit 1 naming a live holder of the lease, and changes nothing", async () => {
    const holder = liveProcess();
    writeLease(holder.pid!);
    const run = await runWeir(["maintain", db, "--retain", "0", "--wait", "0.3"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`pid ${holder.pid}`);
    expect(run.stderr).toContain("weir serve --port 4848");
    const json = await runWeir(["maintain", db, "--retain", "0", "--wait", "0", "--json"]);
    expect(json.code).toBe(1);
    expect(jsonOf(json)).toMatchObject({ error: "lease_held", holder: { pid: holder.pid } });
    expect(jsonOf(await runWeir(["inspect", db, "--json"]))).toMatchObject({ changes: 200 });
    expect(JSON.parse(readFileSync(`${db}.lease`, "utf8")).pid).toBe(holder.pid);
  });

  it("a scheduled run yields at once with exit 0", async () => {
    const holder = liveProcess();
    writeLease(holder.pid!);
    const run = await runWeir(["maintain", db, "--retain", "0", "--scheduled", "--wait", "60", "--json"]);
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({ yielded: true, holder: { pid: holder.pid } });
    expect(jsonOf(await runWeir(["inspect", db, "--json"]))).toMatchObject({ changes: 200 });
  });

  it("takes over a lease left by a dead process", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    writeLease(Number(dead.stdout));
    const run = await runWeir(["maintain", db, "--retain", "10", "--wait", "0", "--json"]);
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({ deleted: 190, more: false });
    expect(existsSync(`${db}.lease`)).toBe(false);
  });

  it("fails with exit 1 on a missing file, leaving no lease behind", async () => {
    const missing = join(dir, "missing.sqlite");
    const run = await runWeir(["maintain", missing, "--json"]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({ error: "not_found" });
    expect(existsSync(`${missing}.lease`)).toBe(false);
    const noDir = await runWeir(["maintain", join(dir, "nowhere", "x.sqlite")]);
    expect(noDir.code).toBe(1);
    expect(noDir.stderr).toContain("no such database file");
  });

  it("of two maintains started together, one waits for the other", async () => {
    const [a, b] = await Promise.all([
      runWeir(["maintain", db, "--retain", "100", "--wait", "30", "--json"]),
      runWeir(["maintain", db, "--retain", "100", "--wait", "30", "--json"]),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const deleted = [jsonOf<{ deleted: number }>(a).deleted, jsonOf<{ deleted: number }>(b).deleted].sort();
    expect(deleted).toEqual([0, 100]);
  });
});

describe("weir maintain after a server", () => {
  it("uses the retention an admin stored through the server, and shrinks its change log", async () => {
    const server = await startTestServer();
    try {
      const ns = `${server.origin}/kept`;
      for (let id = 1; id <= 30; id++) {
        const push = await pushOne(ns, "alice", {
          clientID: "c1",
          id,
          name: "benchPut",
          args: { id: `r${id % 3}`, value: id },
        });
        expect(push.status).toBe(200);
      }
      // The retention an admin sets is stored in the database: maintain, run later without a server, applies it.
      const stored = await runWeir(["admin", ns, "retention", "5", "--admin-key", ADMIN_KEY]);
      expect(stored.code).toBe(0);
      expect(await server.stop()).toBe(0);
      const file = join(server.dir, ".data", "kept.sqlite");
      const run = await runWeir(["maintain", file, "--json"]);
      expect(run.code).toBe(0);
      const report = jsonOf<{ retainChanges: number; retentionSource: string; changes: { after: number } }>(
        run,
      );
      expect(report).toMatchObject({ retainChanges: 5, retentionSource: "stored", more: false });
      expect(report.changes.after).toBeLessThanOrEqual(5);
      expect(jsonOf(await runWeir(["inspect", file, "--json"]))).toMatchObject({
        retainChanges: 5,
        watermark: 30,
        tables: { item: 3 },
      });
    } finally {
      await server.dispose();
    }
  });

  it("waits for a running server's lease, then refuses naming it; runs once the server stops", async () => {
    const server = await startTestServer();
    try {
      const push = await pushOne(`${server.origin}/live`, "alice", {
        clientID: "c1",
        id: 1,
        name: "benchPut",
        args: { id: "r1", value: 1 },
      });
      expect(push.status).toBe(200);
      const file = join(server.dir, ".data", "live.sqlite");
      const refused = await runWeir(["maintain", file, "--wait", "1"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("weir server");
      expect(refused.stderr).toContain(String(server.process.child.pid));
      const scheduled = await runWeir(["maintain", file, "--scheduled"]);
      expect(scheduled.code).toBe(0);
      expect(await server.stop()).toBe(0);
      const run = await runWeir(["maintain", file, "--json"]);
      expect(run.code).toBe(0);
    } finally {
      await server.dispose();
    }
  });
});
