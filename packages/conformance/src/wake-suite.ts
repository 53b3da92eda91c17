import { expect, it } from "vitest";
import { CONFORMANCE_ADMIN_KEY } from "./conformance-config.js";
import { admin, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";
import { Listener, wakeUrl } from "./wake-listener.js";

/** Opens a wake socket of `user` as `clientID`. */
async function listen(t: ConformanceTarget, ns: string, clientID: string, user: string): Promise<Listener> {
  const listener = new Listener(wakeUrl(t, ns, clientID), await t.auth(user));
  await listener.opened;
  return listener;
}

/**
 * Wake sockets: a commit wakes the sockets it concerns (the writer's user, and those whose
 * visibility admits a changed row before or after the change), never the writer's own; an
 * operator's change wakes every socket; `ping` gets `pong`.
 */
export function wakeSuite(target: () => ConformanceTarget): void {
  it("wakes the writer's other sockets and no socket of a user who cannot see the write, and answers ping with pong", async () => {
    const t = target();
    const ns = freshNamespace();
    const writer = new NativeClient(t, ns, "alice");
    const own = await listen(t, ns, writer.clientID, "alice");
    const other = await listen(t, ns, "other-tab", "alice");
    const bob = await listen(t, ns, "bob-tab", "bob");
    try {
      await writer.push([{ name: "createTodo", args: { id: "t1" } }]);
      expect(await other.next()).toBe("wake");
      expect(await bob.heardNothing()).toBe(true);
      // The writer's socket would have been sent `wake` before the others; its next message is the pong.
      expect(await own.heardNothing()).toBe(true);
      // Bob's own write wakes bob's socket (his other tab), and alice's sockets do not hear of it.
      await new NativeClient(t, ns, "bob").push([{ name: "createTodo", args: { id: "t2" } }]);
      expect(await bob.next()).toBe("wake");
      expect(await other.heardNothing()).toBe(true);
    } finally {
      for (const socket of [own, other, bob]) socket.close();
    }
  });

  it("wakes both owners of a row that moves from one to the other, and no one else", async () => {
    const t = target();
    const ns = freshNamespace();
    const writer = new NativeClient(t, ns, "carol");
    await writer.push([{ name: "setTodo", args: { id: "moving", owner: "alice" } }]);
    const alice = await listen(t, ns, "alice-tab", "alice");
    const bob = await listen(t, ns, "bob-tab", "bob");
    const dave = await listen(t, ns, "dave-tab", "dave");
    try {
      // Carol writes a row she cannot see herself: alice held it, bob now does.
      await writer.push([{ name: "setTodo", args: { id: "moving", owner: "bob" } }]);
      expect(await alice.next()).toBe("wake");
      expect(await bob.next()).toBe("wake");
      expect(await dave.heardNothing()).toBe(true);
    } finally {
      for (const socket of [alice, bob, dave]) socket.close();
    }
  });

  it("wakes every socket for a row every user may see, and for an operator's change", async () => {
    const t = target();
    const ns = freshNamespace();
    const writer = new NativeClient(t, ns, "alice");
    const sockets = await Promise.all(["bob", "carol"].map((user) => listen(t, ns, `${user}-tab`, user)));
    try {
      // `item` has no visibility filter: every user sees every item.
      await writer.push([{ name: "putItem", args: { a: "shared", b: 1 } }]);
      for (const socket of sockets) expect(await socket.next()).toBe("wake");
      expect((await admin(t, ns, "invalidate", CONFORMANCE_ADMIN_KEY, undefined, "POST")).status).toBe(200);
      for (const socket of sockets) expect(await socket.next()).toBe("wake");
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  it("targets writes made outside a push like a push's", async () => {
    const t = target();
    if (!t.writeOutsidePush) return;
    const ns = freshNamespace();
    // The namespace exists once a client used it.
    await new NativeClient(t, ns, "alice").sync();
    const alice = await listen(t, ns, "alice-tab", "alice");
    const bob = await listen(t, ns, "bob-tab", "bob");
    try {
      await t.writeOutsidePush(ns, "INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, '', 0, 0)", [
        "job",
        "alice",
      ]);
      expect(await alice.next()).toBe("wake");
      expect(await bob.heardNothing()).toBe(true);
    } finally {
      alice.close();
      bob.close();
    }
  });

  it("refuses a wake socket without credentials or a clientID", async () => {
    const t = target();
    const ns = freshNamespace();
    const anonymous = new Listener(wakeUrl(t, ns, "c1"), "");
    await expect(anonymous.opened).rejects.toThrow(/401/);
    const noClient = new Listener(`${t.url.replace(/^http/, "ws")}/${ns}/wake`, await t.auth("alice"));
    await expect(noClient.opened).rejects.toThrow(/400/);
  });
}
