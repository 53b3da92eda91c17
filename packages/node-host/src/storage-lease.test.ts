import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { CONFORMANCE_ADMIN_KEY, conformanceConfig } from "@weir/conformance";
import { describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";
import { leaseFileFor, readLease, tryAcquireLease } from "./lease.js";

const pull = (url: string, ns: string) =>
  fetch(`${url}/${ns}/pull`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
  });

describe("the server's single-writer lease", () => {
  it("is held while a namespace is open and let go when it closes", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, "leased.sqlite");
    const server = createServer({ ...conformanceConfig(), devAuth: true, dataDir, logger: memoryLogger() });
    const { url } = await server.listen();
    try {
      expect((await pull(url, "leased")).status).toBe(200);
      expect(readLease(file)).toMatchObject({ pid: process.pid, command: "weir server" });
      expect(tryAcquireLease(file, { command: "weir maintain" })).toBeNull();
      server.host!.closeIdle(0);
      const lease = tryAcquireLease(file, { command: "weir maintain" });
      expect(lease).not.toBeNull();
      lease!.release();
      expect((await pull(url, "leased")).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(readLease(file)).toBeNull();
  });

  it("makes a data directory that does not exist yet when an admin route opens the first namespace", async () => {
    const dataDir = join(tempDir(), "not-yet");
    const server = createServer({ ...conformanceConfig(), devAuth: true, dataDir, logger: memoryLogger() });
    const { url } = await server.listen();
    try {
      const status = await fetch(`${url}/first/admin/status`, {
        headers: { "x-admin-key": CONFORMANCE_ADMIN_KEY },
      });
      expect(status.status).toBe(200);
      expect(((await status.json()) as { engine: { watermark: number } }).engine.watermark).toBe(0);
      expect(readLease(join(dataDir, "first.sqlite"))).toMatchObject({ pid: process.pid });
    } finally {
      await server.close();
    }
  });

  it("answers 503 naming the holder when another live process holds it", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, "busy.sqlite");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const lease = {
        pid: holder.pid,
        host: hostname(),
        command: "weir maintain busy.sqlite",
        started: new Date().toISOString(),
        token: "t",
      };
      writeFileSync(leaseFileFor(file), `${JSON.stringify(lease)}\n`);
      const server = createServer({ ...conformanceConfig(), devAuth: true, dataDir, logger: memoryLogger() });
      const { url } = await server.listen();
      try {
        const response = await pull(url, "busy");
        expect(response.status).toBe(503);
        expect(response.headers.get("retry-after")).toBe("5");
        const body = (await response.json()) as { error: string; message: string };
        expect(body.error).toBe("namespace_busy");
        expect(body.message).toContain("weir maintain");
        expect(body.message).not.toContain(dataDir);
      } finally {
        await server.close();
      }
    } finally {
      holder.kill();
    }
  });
});
