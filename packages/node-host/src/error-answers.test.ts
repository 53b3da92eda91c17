import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { conformanceConfig } from "@weir/conformance";
import { INTERNAL_ERROR_MESSAGE } from "@weir/host-core";
import { describe, expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";

/** Sends raw bytes and answers what came back before the server closed the connection. */
function rawRequest(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(bytes));
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("error answers", () => {
  it("a 500 names no server path and carries the request id of its log line", async () => {
    // A data directory that is a file: every namespace fails to open.
    const dataDir = join(tempDir(), "not-a-directory");
    writeFileSync(dataDir, "");
    const logger = memoryLogger();
    const server = createServer({ ...conformanceConfig(), devAuth: true, dataDir, logger });
    const { url } = await server.listen();
    try {
      const response = await fetch(`${url}/ns/pull`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "alice" },
        body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
      });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).not.toContain(dataDir);
      const body = JSON.parse(text) as { error: string; message: string; requestId: string };
      expect(body).toEqual({
        error: "internal",
        message: INTERNAL_ERROR_MESSAGE,
        requestId: expect.any(String),
      });
      expect(response.headers.get("x-request-id")).toBe(body.requestId);
      const logged = logger.lines.filter((line) => line.requestId === body.requestId);
      expect(logged.some((line) => String(line.error).includes(dataDir))).toBe(true);
      expect(logged.some((line) => line.msg === "request" && line.status === 500)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("a request with a control character in a header gets the JSON error shape", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
    });
    const { port } = await server.listen();
    try {
      const body = JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null });
      const head = `POST /ns/pull HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nauthorization: a`;
      for (const bad of [0x01, 0x7f]) {
        const answer = await rawRequest(
          port,
          Buffer.concat([Buffer.from(head, "latin1"), Buffer.from([bad]), Buffer.from(`b\r\n\r\n${body}`)]),
        );
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toMatch(/content-type: application\/json/i);
        const json = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Record<string, string>;
        expect(json).toEqual({ error: "bad_request", message: expect.stringContaining("refused") });
      }
    } finally {
      await server.close();
    }
  });
});
