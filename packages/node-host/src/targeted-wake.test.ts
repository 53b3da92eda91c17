import { Listener, wakeUrl } from "@weir/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryLogger } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

/**
 * A filter with a public side (`owner = ? OR public = 1`) over real wake sockets: a private row
 * wakes its owner's sockets only, a public one every socket, and a row turning private again
 * wakes everyone who could hold it.
 */
describe("wake sockets under a filter with a public side", () => {
  let server: WeirServer;
  let url: string;
  beforeAll(async () => {
    server = createServer({
      schema: {
        tables: {
          note: {
            columns: { id: "string", owner: "string", public: "boolean" },
            primaryKey: ["id"],
          },
        },
      },
      mutators: {
        putNote(tx, args: { id: string; public: boolean }) {
          tx.upsert("note", { id: args.id, owner: tx.claims.userID, public: args.public });
        },
      },
      visibility: (claims) => ({ note: { sql: "owner = ? OR public = 1", params: [claims.userID] } }),
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
    });
    ({ url } = await server.listen());
  });
  afterAll(() => server.close());

  let pushes = 0;
  const putNote = (ns: string, id: string, isPublic: boolean) =>
    fetch(`${url}/${ns}/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "alice" },
      body: JSON.stringify({
        clientGroupID: "alice-group",
        pushVersion: 1,
        mutations: [
          {
            type: "custom",
            id: ++pushes,
            clientID: "alice-1",
            name: "putNote",
            args: [{ id, public: isPublic }],
          },
        ],
      }),
    });

  it("wakes the owner alone for a private row, and everyone for a public one", async () => {
    const ns = "notes";
    const target = { url, auth: (user: string) => user, close: async () => {} };
    const open = async (clientID: string, user: string) => {
      const listener = new Listener(wakeUrl(target, ns, clientID), user);
      await listener.opened;
      return listener;
    };
    const alice = await open("alice-2", "alice");
    const bob = await open("bob-1", "bob");
    const carol = await open("carol-1", "carol");
    try {
      expect((await putNote(ns, "private", false)).status).toBe(200);
      expect(await alice.next()).toBe("wake");
      expect(await bob.heardNothing()).toBe(true);
      expect(await carol.heardNothing()).toBe(true);

      expect((await putNote(ns, "shared", true)).status).toBe(200);
      for (const socket of [alice, bob, carol]) expect(await socket.next()).toBe("wake");

      // Public before the change: whoever held it must hear that it went private.
      expect((await putNote(ns, "shared", false)).status).toBe(200);
      for (const socket of [alice, bob, carol]) expect(await socket.next()).toBe("wake");
    } finally {
      for (const socket of [alice, bob, carol]) socket.close();
    }
  });
});
