import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { postJson, pushOne, startTestServer, type TestServer } from "../../test/test-server.js";
import { jsonOf, runWeir } from "../../test/weir-process.js";

const servers: TestServer[] = [];
let dataDir: string;

afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

async function serve(): Promise<TestServer> {
  const server = await startTestServer(undefined, { args: ["--data-dir", dataDir] });
  servers.push(server);
  return server;
}

const pull = (origin: string, cookie: number | null) =>
  postJson(
    `${origin}/lost/pull`,
    { clientGroupID: "group-alice", clientID: "c1", cookie },
    { authorization: "alice" },
  );

describe("weir accept-loss", () => {
  it("lets a namespace whose file was emptied start anew, once an operator accepts the loss", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "weir-lost-"));
    const file = join(dataDir, "lost.sqlite");
    let server = await serve();
    for (let id = 1; id <= 3; id++) {
      const pushed = await pushOne(`${server.origin}/lost`, "alice", {
        clientID: "c1",
        id,
        name: "benchPut",
        args: { id: `r${id}`, value: id },
      });
      expect(pushed.status).toBe(200);
    }
    const cookie = ((await pull(server.origin, null)).body as { cookie: number }).cookie;
    expect(await server.stop()).toBe(0);

    truncateSync(file, 0);
    server = await serve();
    // The server does not make it a new, empty namespace (which would tell the client to drop its rows).
    const refused = await pull(server.origin, cookie);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: "namespace_unavailable", reason: "empty" });

    const accepted = await runWeir(["accept-loss", file, "--json"]);
    expect(accepted.code).toBe(0);
    const report = jsonOf<{ lastWatermark: number; movedAside: string[] }>(accepted);
    expect(report.lastWatermark).toBe(cookie);
    expect(report.movedAside).toEqual([expect.stringMatching(/lost\.sqlite\.lost-/)]);
    expect(statSync(report.movedAside[0]!).size).toBe(0);
    expect(existsSync(file)).toBe(false);

    // The running server now starts the namespace anew: the client learns its copy is gone.
    expect((await pull(server.origin, cookie)).status).toBe(409);
    expect((await pull(server.origin, null)).body).toMatchObject({ rowsPatch: [{ op: "clear" }] });
    const fresh = await pushOne(
      `${server.origin}/lost`,
      "alice",
      { clientID: "c2", id: 1, name: "benchPut", args: { id: "new", value: 1 } },
      "group-new",
    );
    expect(fresh.status).toBe(200);
  });

  it("refuses a namespace the data directory does not know", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "weir-lost-"));
    const run = await runWeir(["accept-loss", join(dataDir, "nothing.sqlite"), "--json"]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toMatchObject({ error: "not_found" });
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
