import { Replicache } from "replicache";
import { replicacheMutators } from "../src/client/replicache-mutators.js";
import { mutators } from "../src/mutators.js";
import { todoSchema } from "../src/schema.js";

export type TodoClient = Replicache<ReturnType<typeof replicacheMutators<typeof mutators>>>;

let names = 0;

/**
 * The stock Replicache client (memory store) as the page makes it: the todo mutators run
 * locally, pushes and pulls go to `base` (a namespace's URL). Each call is a new client group.
 * The test decides when to sync; `onPush` sees each push body sent.
 */
export function todoClient(base: string, user: string, onPush?: (body: string) => void): TodoClient {
  const rep: TodoClient = new Replicache({
    name: `test-${user}-${++names}-${Date.now()}`,
    kvStore: "mem",
    auth: user,
    pullURL: `${base}/replicache/pull`,
    pushURL: `${base}/replicache/push`,
    mutators: replicacheMutators(mutators, { schema: todoSchema, userID: user }),
    pullInterval: null,
    logLevel: "error",
  });
  if (onPush) {
    const push = rep.pusher;
    rep.pusher = (request, requestID) => {
      onPush(JSON.stringify(request));
      return push(request, requestID);
    };
  }
  return rep;
}

/** Pushes what is pending, then pulls until the server has confirmed every local mutation. */
export async function sync(rep: TodoClient): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    await rep.push({ now: true });
    await rep.pull({ now: true });
    if ((await rep.experimentalPendingMutations()).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the client never caught up");
}
