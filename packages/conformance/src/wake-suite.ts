import { expect, it } from "vitest";
import { freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";
import { Listener, wakeUrl } from "./wake-listener.js";

/** Wake sockets: every other client hears `wake` after a commit; `ping` gets `pong`. */
export function wakeSuite(target: () => ConformanceTarget): void {
  it("wakes every socket but the writer's, and answers ping with pong", async () => {
    const t = target();
    const ns = freshNamespace();
    const writer = new NativeClient(t, ns, "alice");
    const sockets = await Promise.all(
      [writer.clientID, "other-1", "other-2"].map(async (clientID) => {
        const listener = new Listener(
          wakeUrl(t, ns, clientID),
          await t.auth(clientID === "other-2" ? "bob" : "alice"),
        );
        await listener.opened;
        return listener;
      }),
    );
    const [own, first, second] = sockets as [Listener, Listener, Listener];
    try {
      await writer.push([{ name: "createTodo", args: { id: "t1" } }]);
      expect(await first.next()).toBe("wake");
      expect(await second.next()).toBe("wake");
      // The writer's socket would have been sent `wake` before the others; its next message is the pong.
      own.ws.send("ping");
      expect(await own.next()).toBe("pong");
    } finally {
      for (const socket of sockets) socket.close();
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
