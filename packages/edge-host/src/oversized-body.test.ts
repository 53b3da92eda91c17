import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { push, rows } from "../test/client.js";
import { startWorkerd, type Workerd } from "../test/workerd.js";

const LARGE = 20 * 1024 * 1024;

/** Posts `bytes` of padding to `path`, with or without a declared length; answers status, body, headers. */
function postLarge(
  url: string,
  path: string,
  bytes: number,
  declared: boolean,
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const req = request(target, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "alice",
        ...(declared ? { "content-length": String(bytes) } : {}),
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    // The server may answer and close before the whole body went out.
    req.on("error", reject);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", write);
          return;
        }
      }
      req.end();
    };
    write();
  });
}

describe("an oversized body through the Worker", () => {
  let w: Workerd;
  beforeAll(async () => {
    w = await startWorkerd();
  });
  afterAll(() => w.dispose());

  it.each([true, false])(
    "is refused with the JSON 413 and no uncaught error (length declared: %s)",
    async (declared) => {
      expect((await push(w.url, "big-body", "alice", 1, { id: "kept" })).status).toBe(200);
      const before = w.output.text.length;
      for (const route of ["/big-body/pull", "/big-body/push"]) {
        // On a loaded machine the connection can break under the client's writes before the
        // answer is read (EPIPE): that says nothing of the answer, so such a try is made again.
        const send = () =>
          postLarge(w.url, route, LARGE, declared).catch((error: Error) => ({
            status: -1,
            body: error.message,
            headers: {},
          }));
        let answer = await send();
        for (
          let retry = 0;
          retry < 2 && answer.status === -1 && /EPIPE|ECONNRESET/.test(answer.body);
          retry++
        )
          answer = await send();
        expect(answer, JSON.stringify(answer)).toMatchObject({ status: 413 });
        expect(JSON.parse(answer.body)).toMatchObject({
          error: "payload_too_large",
          message: expect.any(String),
        });
      }
      // The object serves on, and nothing was written.
      expect((await rows(w.url, "big-body", "alice")).map((row) => row.id)).toEqual(["kept"]);
      expect(w.output.text.slice(before)).not.toMatch(/Uncaught|TypeError|restarted/i);
    },
  );

  it("forwards a body sent without a length that stays within the limit", async () => {
    const body = JSON.stringify({
      clientGroupID: "g-alice",
      pushVersion: 1,
      mutations: [
        { type: "custom", id: 1, clientID: "c-alice", name: "createTodo", args: [{ id: "chunked" }] },
      ],
    });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(new URL("/chunked-body/push", w.url), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "alice" },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      // Two writes without a declared length: the body goes chunked.
      req.write(body.slice(0, 20));
      req.end(body.slice(20));
    });
    expect(status).toBe(200);
    expect((await rows(w.url, "chunked-body", "alice")).map((row) => row.id)).toEqual(["chunked"]);
  });
});
