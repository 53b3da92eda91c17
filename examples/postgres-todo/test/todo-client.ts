import { replicacheMutators } from "@weir/example-todo/client/replicache-mutators";
import { mutators } from "@weir/example-todo/mutators";
import { type Todo, todoSchema } from "@weir/example-todo/schema";
import { Replicache } from "replicache";

export type TodoClient = Replicache<ReturnType<typeof replicacheMutators<typeof mutators>>>;

let names = 0;

/**
 * The stock Replicache client (memory store) as the page makes it: the todo example's mutators
 * run locally, pushes and pulls go to weir. Each call is a new client group. The test decides
 * when to sync; `onPush` sees each push body sent.
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

/** Pushes what is pending, then pulls until weir has acknowledged every local mutation. */
export async function sync(rep: TodoClient): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    await rep.push({ now: true });
    await rep.pull({ now: true });
    if ((await rep.experimentalPendingMutations()).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the client never caught up");
}

/** The client's todos, by `sort` then id. */
export async function todosOf(rep: TodoClient): Promise<Todo[]> {
  const rows = (await rep.query((tx) =>
    tx.scan({ prefix: "todo/" }).values().toArray(),
  )) as unknown as Todo[];
  return sortById(rows);
}

export function sortById(todos: readonly Todo[]): Todo[] {
  return [...todos].sort((a, b) => a.sort - b.sort || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
