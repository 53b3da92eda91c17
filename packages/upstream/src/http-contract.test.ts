import { httpUpstream } from "@weir/host-core";
import { UpstreamCallError, UpstreamGoneError } from "@weir/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schema, tempFile } from "../test/fixtures.js";
import { sqliteUpstream } from "./sqlite-upstream.js";
import { createUpstreamServer, type UpstreamServer } from "./upstream-server.js";

// host-core's HTTP client against this package's server: the two ends of the contract.
describe("the upstream contract over HTTP", () => {
  const source = sqliteUpstream({ file: tempFile(), schema, keepWatermarks: 2 });
  let server: UpstreamServer;
  let url = "";
  beforeAll(async () => {
    server = createUpstreamServer({ source, token: "t0ken" });
    url = (await server.listen()).url;
  });
  afterAll(async () => {
    await server.close();
    source.close();
  });

  it("reads changes and snapshot pages as the source answers them", async () => {
    const client = httpUpstream({ url, token: "t0ken" });
    source.db.prepare("INSERT INTO blob VALUES (?, ?, NULL)").run(9007199254740993n, Buffer.from([1, 2]));
    expect(await client.changes(0n, 10)).toEqual(await source.changes(0n, 10));
    expect(await client.snapshotPage("blob", null, 10)).toEqual({
      watermark: 1n,
      rows: [{ n: "9007199254740993", data: "AQI=", meta: null }],
      nextCursor: null,
    });
  });

  it("turns 410 into UpstreamGoneError and other failures into UpstreamCallError", async () => {
    for (let i = 0; i < 3; i++) {
      source.db.prepare("INSERT INTO todo VALUES (?, 'u', 0, 0)").run(`t${i}`);
      source.publish();
    }
    await expect(httpUpstream({ url, token: "t0ken" }).changes(0n, 10)).rejects.toEqual(
      new UpstreamGoneError(2n),
    );
    await expect(httpUpstream({ url, token: "wrong" }).changes(3n, 10)).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      httpUpstream({ url: "http://127.0.0.1:9", token: "t0ken" }).changes(3n, 10),
    ).rejects.toBeInstanceOf(UpstreamCallError);
    const busy = httpUpstream({
      url,
      fetch: async () => new Response("{}", { status: 503, headers: { "retry-after": "3" } }),
    });
    await expect(busy.changes(3n, 10)).rejects.toMatchObject({ status: 503, retryAfterMs: 3_000 });
    const odd = httpUpstream({ url, fetch: async () => Response.json({ watermark: -1, changes: [] }) });
    await expect(odd.changes(3n, 10)).rejects.toMatchObject({ status: 502 });
  });
});
