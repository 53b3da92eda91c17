import { connectZero, pokePartsOf, until, type ZeroTestSocket, zeroSecProtocol } from "@weir/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { push, send } from "../test/client.js";
import { startWorkerd, tempDir, type Workerd } from "../test/workerd.js";

// Zero connections through hibernation, for real: workerd hibernates an object whose only work is
// hibernatable sockets after about ten idle seconds, and the next event reaches a new instance
// (with the sockets still open). Raw sockets, since the stock client's pings every five seconds
// would keep the object awake.

/** Long enough for the counters' flush timer (10 s) and then workerd's idle eviction (10 s). */
const HIBERNATION_WAIT_MS = 26_000;

let workerd: Workerd;

beforeAll(async () => {
  workerd = await startWorkerd({ persistDir: tempDir() });
});

afterAll(async () => {
  await workerd.dispose();
});

function subscribe(ns: string, user: string, group: string): Promise<ZeroTestSocket> {
  const init = [
    "initConnection",
    { desiredQueriesPatch: [{ op: "put", hash: "done", name: "doneTodos", args: [] }] },
  ];
  return connectZero(workerd.url, ns, {
    group,
    clientID: `c-${group}`,
    protocol: zeroSecProtocol(init, user),
  });
}

async function instance(ns: string): Promise<string> {
  return (await send(workerd.url, `/__instance/${ns}`)).json.instance as string;
}

const pokeEnds = (socket: ZeroTestSocket) =>
  socket.messages.filter((m) => m[0] === "pokeEnd").map((m) => (m[1] as { cookie: string }).cookie);

describe("Zero connections through hibernation", () => {
  it("are rebuilt from their sockets' attachments: the next poke starts at their cookie, with no reset and each user's rows; one too large to keep is closed for a reconnect", async () => {
    const ns = `hib${Date.now().toString(36)}`;
    expect((await push(workerd.url, ns, "alice", 1, { id: "a1", text: "Before", done: true })).status).toBe(
      200,
    );
    const alice = await subscribe(ns, "alice", "ga");
    const bob = await subscribe(ns, "bob", "gb");
    // Claims past the attachment's 2 KiB: this connection cannot be kept through hibernation.
    const large = await subscribe(ns, "alice~pad2500", "gl");
    await until(() => pokePartsOf(alice).some((part) => JSON.stringify(part.rowsPatch).includes('"a1"')));
    await until(() => pokeEnds(bob).length > 0);
    await until(() => pokeEnds(large).length > 0);
    const before = await instance(ns);

    await new Promise((resolve) => setTimeout(resolve, HIBERNATION_WAIT_MS));
    // Read once all is quiet (a poke may still have been under way a moment ago).
    const aliceCookie = pokeEnds(alice).at(-1)!;
    const bobCookie = pokeEnds(bob).at(-1)!;
    const seen = alice.messages.length;
    const bobSeen = bob.messages.length;
    expect((await push(workerd.url, ns, "alice", 2, { id: "a2", text: "After", done: true })).status).toBe(
      200,
    );
    expect((await push(workerd.url, ns, "bob", 1, { id: "b1", text: "Bob's", done: true })).status).toBe(200);

    await until(() => pokePartsOf(alice).some((part) => JSON.stringify(part.rowsPatch).includes('"a2"')));
    await until(() => pokePartsOf(bob).some((part) => JSON.stringify(part.rowsPatch).includes('"b1"')));
    // A new instance answered: the object hibernated, and its hub was rebuilt.
    expect(await instance(ns)).not.toBe(before);
    const after = alice.messages.slice(seen);
    const firstStart = after.find((m) => m[0] === "pokeStart")![1] as { baseCookie: string };
    expect(firstStart.baseCookie).toBe(aliceCookie);
    expect(JSON.stringify(after)).not.toContain('"op":"clear"');
    expect(JSON.stringify(alice.messages)).not.toContain('"b1"');
    expect(JSON.stringify(bob.messages)).not.toContain('"a2"');
    const bobAfter = bob.messages.slice(bobSeen);
    expect((bobAfter.find((m) => m[0] === "pokeStart")![1] as { baseCookie: string }).baseCookie).toBe(
      bobCookie,
    );
    expect(JSON.stringify(bobAfter)).not.toContain('"op":"clear"');
    // The one whose state was too large to keep is told to reconnect, and closed.
    expect(await large.next("error")).toMatchObject({ kind: "Internal" });
    expect((await large.closed).code).toBe(1002);
    // The restored connection goes on answering frames.
    alice.ws.send(JSON.stringify(["ping", {}]));
    await alice.next("pong");
    alice.ws.close();
    bob.ws.close();
  });
});
