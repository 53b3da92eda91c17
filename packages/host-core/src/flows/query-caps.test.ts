import { afterEach, describe, expect, it } from "vitest";
import { headerUser, send, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";

// A query-aware answer cut by a cap commits a new version as its cookie: the host's caught-up
// answers from memory learn that watermark from the answer, and never answer the group that is
// owed rows.
const config: WeirConfig = {
  schema: { tables: { note: { columns: { id: "string", text: "string" }, primaryKey: ["id"] } } },
  mutators: {
    put(tx, args) {
      const { id, text } = args as { id: string; text: string };
      tx.upsert("note", { id, text });
    },
  },
  authenticate: headerUser,
  queries: { notes: () => ({ table: "note" }) },
  maxChangeRows: 1,
};

const hosts: WeirHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

async function setup() {
  const host = await testHost(config);
  hosts.push(host);
  const pull = async (group: string, cookie: number | null, queries?: unknown[]) => {
    const response = await send(host, "POST", "/ns/pull", {
      user: "alice",
      body: {
        clientGroupID: group,
        clientID: `${group}-c`,
        cookie,
        ...(queries ? { queries: { patch: queries } } : {}),
      },
    });
    expect(response.status).toBe(200);
    return response.json as { cookie: number; unchanged?: true; rowsPatch?: { op: string }[] };
  };
  const mutations = [1, 2, 3].map((id) => ({
    type: "custom",
    clientID: "w-c",
    id,
    name: "put",
    args: [{ id: `n${id}`, text: "t" }],
    timestamp: 1,
  }));
  await send(host, "POST", "/ns/push", {
    user: "alice",
    body: { clientGroupID: "w", pushVersion: 1, mutations },
  });
  return { pull };
}

describe("query-aware answers cut by a cap, over HTTP", () => {
  it("move the host's watermark, and the owed group is not answered from memory", async () => {
    const { pull } = await setup();
    // A plain group, caught up and answered from memory.
    let plain = await pull("plain", null);
    while (!(await pull("plain", plain.cookie)).unchanged) plain = await pull("plain", plain.cookie);
    const first = await pull("q", null, [{ op: "put", hash: "h", name: "notes", args: null }]);
    expect(first.cookie).toBeGreaterThan(plain.cookie);
    expect(first.rowsPatch).toHaveLength(2);
    // Another client at the new cookie is not from the future, and is caught up.
    expect(await pull("plain", first.cookie)).toEqual({ cookie: first.cookie, unchanged: true });
    expect(await pull("plain", first.cookie)).toEqual({ cookie: first.cookie, unchanged: true });
    // The cut group, pulling without the field at the same cookie, gets the rest.
    const second = await pull("q", first.cookie);
    expect(second.rowsPatch).toHaveLength(1);
    const third = await pull("q", second.cookie);
    expect(third.rowsPatch).toHaveLength(1);
    expect(await pull("q", third.cookie)).toEqual({ cookie: third.cookie, unchanged: true });
    expect(await pull("plain", plain.cookie)).toMatchObject({ cookie: third.cookie, rowsPatch: [] });
  });
});
