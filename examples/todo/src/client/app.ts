import { Replicache } from "replicache";
import { mutators } from "../mutators.js";
import { NAMESPACE, type Todo, todoSchema } from "../schema.js";
import { $, currentUser, newID, showSaving, showSignIn, showTodoPage } from "./page-user.js";
import { pushThenPull } from "./push-then-pull.js";
import { replicacheMutators } from "./replicache-mutators.js";
import { markSynced, renderTodoList, sortTodos } from "./todo-list-view.js";
import { connectWakeSocket } from "./wake-socket.js";

// The tab's user is remembered under this key (see page-user).
const USER_KEY = "weir-todo-user";

function showTodos(user: string): void {
  const base = `${location.origin}/${NAMESPACE}`;
  const rep: Replicache<ReturnType<typeof replicacheMutators<typeof mutators>>> = new Replicache({
    // One local database per user, so switching users never mixes their rows.
    name: `weir-todo:${user}`,
    // Development authentication on the server takes this header as the user id.
    auth: user,
    pullURL: `${base}/replicache/pull`,
    pushURL: `${base}/replicache/push`,
    pusher: pushThenPull({ url: `${base}/replicache/push`, auth: user, pull: () => rep.pull() }),
    mutators: replicacheMutators(mutators, { schema: todoSchema, userID: user }),
    logLevel: "error",
  });

  const { list, empty, count, status, saved } = showTodoPage(user, USER_KEY);
  let todos: Todo[] = [];

  // Which todos have local changes the server has not confirmed. A confirming pull changes no
  // row the page shows (the server's rows equal the local ones), so no subscription fires for
  // it: while anything is pending, look again a few times a second (a local read).
  // A look that started before the list last rendered may miss the mutation behind that
  // render: its answer is dropped (the render started a look of its own).
  let renders = 0;
  let recheck: ReturnType<typeof setTimeout> | undefined;
  const refreshPending = async () => {
    clearTimeout(recheck);
    const seen = renders;
    const pending = await rep.experimentalPendingMutations();
    if (seen !== renders) return;
    markSynced(list, new Set(pending.map((m) => (m.args as { id?: unknown } | null)?.id).filter(isString)));
    showSaving(saved, pending.length);
    if (pending.length > 0) recheck = setTimeout(() => void refreshPending(), 250);
  };

  const report = (error: unknown) => console.error(error);
  const settle = (mutation: Promise<void>) => mutation.catch(report).finally(() => void refreshPending());
  const actions = {
    toggle: (todo: Todo) => settle(rep.mutate.updateTodo({ id: todo.id, done: !todo.done })),
    rename: (todo: Todo, text: string) => settle(rep.mutate.updateTodo({ id: todo.id, text })),
    remove: (todo: Todo) => settle(rep.mutate.deleteTodo({ id: todo.id })),
  };

  rep.subscribe(async (tx) => (await tx.scan({ prefix: "todo/" }).values().toArray()) as unknown as Todo[], {
    onData: (rows) => {
      todos = sortTodos(rows);
      renders++;
      renderTodoList(list, todos, actions);
      void refreshPending();
      empty.hidden = todos.length > 0;
      const left = todos.filter((todo) => !todo.done).length;
      count.textContent = `${left} ${left === 1 ? "item" : "items"} left`;
    },
  });

  const form = $<HTMLFormElement>("form.new-todo");
  const input = $<HTMLInputElement>("form.new-todo input");
  form.onsubmit = (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    const sort = todos.reduce((max, todo) => Math.max(max, todo.sort), 0) + 1;
    settle(rep.mutate.createTodo({ id: newID(), text, done: false, sort }));
    input.value = "";
  };
  input.focus();

  const wsBase = base.replace(/^http/, "ws");
  connectWakeSocket({
    // A browser cannot set headers on a WebSocket, so the credential rides in the query.
    url: `${wsBase}/wake?clientID=${encodeURIComponent(rep.clientID)}&auth=${encodeURIComponent(user)}`,
    onWake: () => rep.pull(),
    onStatus: (state) => {
      status.dataset.status = state;
      status.textContent = state;
    },
  });
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

const user = currentUser(USER_KEY);
if (user) showTodos(user);
else showSignIn(USER_KEY);
