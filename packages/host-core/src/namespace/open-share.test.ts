import { describe, expect, it } from "vitest";
import { ScriptedUpstream } from "../../test/scripted-upstream.js";
import { headerUser, send, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";

/** Waits for `check` to hold, polling. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * One user cannot hold more than their share of the open-namespace slots: Mallory's delegated
 * pushes, each waiting on the app, keep her namespaces in use; with 4 slots she may hold one, and
 * Victor's namespaces still open.
 */
describe("the open-namespace slots", () => {
  it("are shared: a user whose namespaces are all in use is refused another, and another user's opens", async () => {
    const upstream = new ScriptedUpstream();
    const waiting: Array<() => void> = [];
    const calls: string[] = [];
    // The app's server answers a mutate call once the test lets it.
    const appFetch = async (_url: string, init: RequestInit): Promise<Response> => {
      const body = JSON.parse(String(init.body)) as { mutations: Array<{ clientID: string; id: number }> };
      calls.push(new Headers(init.headers).get("x-weir-namespace") ?? "");
      await new Promise<void>((resolve) => waiting.push(resolve));
      return Response.json({
        mutations: body.mutations.map((m) => ({ id: { clientID: m.clientID, id: m.id }, result: {} })),
        watermark: upstream.watermark,
      });
    };
    const config: WeirConfig = {
      schema: { tables: { item: { columns: { id: "string", n: "integer" }, primaryKey: ["id"] } } },
      mutators: {},
      authenticate: headerUser,
      maxOpenNamespaces: 4,
      upstream: { source: upstream, freshnessMs: 60_000 },
      mutate: { url: "http://app.test/mutate", fetch: appFetch },
    };
    const host = await testHost(config);
    const push = (ns: string) =>
      send(host, "POST", `/${ns}/push`, {
        user: "mallory",
        body: {
          clientGroupID: `${ns}-g`,
          pushVersion: 1,
          mutations: [{ type: "custom", clientID: `${ns}-c`, id: 1, name: "setItem", args: [{}] }],
        },
      });
    // Mallory's first namespace is held by a push waiting on the app.
    const first = push("m1");
    await until(() => calls.length === 1);
    // Each further one is refused while hers are in use (without the share, each would take a
    // slot and wait too, and the server would have none left for Victor).
    const refused: Array<{ status: number; json: { error: string; message: string } }> = [];
    for (const ns of ["m2", "m3", "m4"]) {
      const answer = push(ns);
      const settled = await Promise.race([answer, until(() => calls.length > 1).then(() => null)]);
      if (settled === null) break;
      refused.push(settled);
    }
    expect(refused.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(refused[0]!.json).toMatchObject({ error: "server_busy" });
    expect(refused[0]!.json.message).toMatch(/as many as one user may hold at once/);
    expect(calls).toEqual(["m1"]);
    // Victor opens namespaces of his own.
    for (const ns of ["v1", "v2"]) {
      const pulled = await send(host, "POST", `/${ns}/pull`, {
        user: "victor",
        body: { clientGroupID: `${ns}-g`, clientID: `${ns}-c`, cookie: null },
      });
      expect(pulled.status).toBe(200);
    }
    // Mallory's push is answered once the app answers; her next namespace then opens in its place.
    for (const release of waiting.splice(0)) release();
    expect((await first).status).toBe(200);
    const next = push("m2");
    await until(() => calls.length === 2);
    for (const release of waiting.splice(0)) release();
    expect((await next).status).toBe(200);
    await host.close();
  });
});
