import { describe, expect, it } from "vitest";
import { partsFromRequest } from "./http-parts.js";
import { readJsonBody as readParts } from "./read-json-body.js";

const readJsonBody = async (request: Request, max: number, optional?: boolean) =>
  readParts(partsFromRequest(request), max, optional);

const request = (
  body: BodyInit | null,
  headers: Record<string, string> = { "content-type": "application/json" },
) => new Request("http://x/ns/pull", { method: "POST", body, headers });

async function status(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe("readJsonBody", () => {
  it("parses JSON of the json media types", async () => {
    expect(await readJsonBody(request('{"a":1}'), 100)).toEqual({ a: 1 });
    expect(
      await readJsonBody(request("[1]", { "content-type": "application/vnd.x+json; charset=utf-8" }), 100),
    ).toEqual([1]);
    expect(await readJsonBody(request(null), 100, true)).toBeUndefined();
  });

  it("refuses what is not JSON, empty or too large", async () => {
    expect(await status(readJsonBody(request("{}", { "content-type": "text/plain" }), 100))).toBe(415);
    expect(await status(readJsonBody(request("{}", {}), 100))).toBe(415);
    expect(await status(readJsonBody(request("{"), 100))).toBe(400);
    expect(await status(readJsonBody(request(new Uint8Array([0xc3, 0x28])), 100))).toBe(400);
    expect(await status(readJsonBody(request(null), 100))).toBe(400);
    expect(await status(readJsonBody(request(`"${"x".repeat(200)}"`), 100))).toBe(413);
    const stream = new ReadableStream({
      pull(controller) {
        controller.enqueue(new Uint8Array(64));
      },
    });
    const endless = new Request("http://x/", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(await status(readJsonBody(endless, 1000))).toBe(413);
  });

  it("parses a body the host has read already without a promise, with the same checks", () => {
    const parts = (body: Uint8Array | null, type = "application/json") => ({
      ...partsFromRequest(
        new Request("http://x/ns/pull", { method: "POST", headers: { "content-type": type } }),
      ),
      body,
    });
    const bytes = (text: string) => new TextEncoder().encode(text);
    expect(readParts(parts(bytes('{"a":1}')), 100)).toEqual({ a: 1 });
    expect(readParts(parts(null), 100, true)).toBeUndefined();
    const refused = (run: () => unknown) => {
      try {
        run();
        return 200;
      } catch (error) {
        return (error as { status: number }).status;
      }
    };
    expect(refused(() => readParts(parts(bytes("{}"), "text/plain"), 100))).toBe(415);
    expect(refused(() => readParts(parts(bytes(`"${"x".repeat(200)}"`)), 100))).toBe(413);
    expect(refused(() => readParts(parts(new Uint8Array([0xc3, 0x28])), 100))).toBe(400);
  });

  it("refuses a lone surrogate anywhere in the body, and keeps escaped pairs", () => {
    const parts = (text: string) => ({
      ...partsFromRequest(
        new Request("http://x/ns/push", { method: "POST", headers: { "content-type": "application/json" } }),
      ),
      body: new TextEncoder().encode(text),
    });
    const message = (text: string) => {
      try {
        readParts(parts(text), 1000);
        return "accepted";
      } catch (error) {
        return `${(error as { status: number }).status} ${(error as Error).message}`;
      }
    };
    expect(message('{"m":[{"args":[{"text":"a\\ud800b"}]}]}')).toMatch(
      /^400 m\[0\]\.args\[0\]\.text: .*lone/,
    );
    expect(message('{"m":"\\udc00"}')).toMatch(/^400 m:/);
    expect(message('{"\\ud83d":1}')).toMatch(/^400 /);
    expect(readParts(parts('{"m":"\\ud83d\\ude00 \\u00e9"}'), 1000)).toEqual({ m: "😀 é" });
  });
});
