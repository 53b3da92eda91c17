import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, UNTHROTTLED_BENCH_CONFIG } from "../../test/test-server.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(UNTHROTTLED_BENCH_CONFIG);
});

afterAll(() => server.dispose());

const short = ["--duration", "1", "--warmup", "0", "--clients", "4"];

describe("weir bench", () => {
  it("push: reports mutations and latency percentiles as JSON", async () => {
    const run = await runWeir([
      "bench",
      `${server.origin}/push`,
      "--mode",
      "push",
      ...short,
      "-m",
      "5",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const result = jsonOf<{
      mutations: number;
      pushes: number;
      errors: number;
      mutationsPerSec: number;
      latency: { count: number; p50Ms: number; p99Ms: number; maxMs: number };
    }>(run);
    expect(result).toMatchObject({ mode: "push", clients: 4, mutationsPerPush: 5, errors: 0 });
    expect(result.pushes).toBeGreaterThan(0);
    expect(result.mutations).toBe(result.pushes * 5);
    expect(result.mutationsPerSec).toBeGreaterThan(0);
    expect(result.latency.count).toBe(result.pushes);
    expect(result.latency.p50Ms).toBeLessThanOrEqual(result.latency.p99Ms);
    expect(result.latency.p99Ms).toBeLessThanOrEqual(result.latency.maxMs);
    // Every acknowledged mutation is in the database (read from the live server's file).
    const report = jsonOf<{ clientList: { lastMutationID: number }[]; tables: { item: number } }>(
      await runWeir(["inspect", join(server.dir, ".data", "push.sqlite"), "--json"]),
    );
    expect(report.clientList).toHaveLength(4);
    expect(report.clientList.reduce((sum, client) => sum + client.lastMutationID, 0)).toBe(result.mutations);
    expect(report.tables.item).toBe(result.mutations);
  });

  it("push in the native dialect, human output", async () => {
    const run = await runWeir(["bench", `${server.origin}/native`, ...short, "--dialect", "native"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^push: [\d,.]+ mutations\/s/m);
    expect(run.stdout).toMatch(/^latency ms {2}p50 /m);
    expect(run.stdout).toContain("errors: 0");
  });

  it("seed then full pull: a new client receives every row", async () => {
    const ns = `${server.origin}/full`;
    const seed = await runWeir(["bench", ns, "--mode", "seed", "--rows", "2500", "--json"]);
    expect(seed.code).toBe(0);
    expect(jsonOf(seed)).toMatchObject({ rows: 2500, mutations: 3 });
    const full = await runWeir(["bench", ns, "--mode", "full-pull", "--repeat", "2", "--json"]);
    expect(full.code).toBe(0);
    const result = jsonOf<{ rows: number; rowsPerSec: number; timesMs: number[] }>(full);
    expect(result.rows).toBe(2500);
    expect(result.timesMs).toHaveLength(2);
    expect(result.rowsPerSec).toBeGreaterThan(0);
  });

  it("pull: caught-up pulls carry no changes", async () => {
    const run = await runWeir(["bench", `${server.origin}/full`, "--mode", "pull", ...short, "--json"]);
    expect(run.code).toBe(0);
    const result = jsonOf<{ pulls: number; changed: number; errors: number }>(run);
    expect(result.pulls).toBeGreaterThan(0);
    expect(result).toMatchObject({ changed: 0, errors: 0 });
  });

  it("wake: every socket hears every push", async () => {
    const run = await runWeir([
      "bench",
      `${server.origin}/wake`,
      "--mode",
      "wake",
      "--sockets",
      "20",
      "--rounds",
      "3",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const result = jsonOf<{ missed: number; latency: { count: number } }>(run);
    expect(result).toMatchObject({ sockets: 20, rounds: 3, missed: 0 });
    expect(result.latency.count).toBe(60);
  });

  it("wake: sockets past the server's cap for one user fail with the server's refusal", async () => {
    const run = await runWeir(["bench", `${server.origin}/wake-cap`, "--mode", "wake", "--sockets", "101"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/wake socket \d+ refused with HTTP 429: .*too_many_sockets.*100 sockets open/);
  });

  it("exits 1 when requests fail: a mutator the server does not have", async () => {
    const run = await runWeir([
      "bench",
      `${server.origin}/bad`,
      ...short,
      "--dialect",
      "native",
      "--mutator",
      "nope",
      "--json",
    ]);
    expect(run.code).toBe(1);
    const result = jsonOf<{ errors: number; firstError: string }>(run);
    expect(result.errors).toBeGreaterThan(0);
    expect(result.firstError).toContain("app");
  });

  it("--args shapes each mutation's arguments: a value the column refuses fails every push", async () => {
    const args = (template: string) =>
      runWeir([
        "bench",
        `${server.origin}/args`,
        ...short,
        "--dialect",
        "native",
        "--args",
        template,
        "--json",
      ]);
    const fine = await args('{"id":"$id","value":"$n"}');
    expect(fine.code).toBe(0);
    const refused = await args('{"id":"$id","value":"not a number"}');
    expect(refused.code).toBe(1);
    expect(jsonOf<{ firstError: string }>(refused).firstError).toContain("app");
    const malformed = await args("{id");
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("JSON template");
  });

  it("exits 1 when no server answers", async () => {
    const run = await runWeir(["bench", "http://127.0.0.1:9/none", "--mode", "full-pull", "--repeat", "1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^weir: /m);
  });
});
