import { Zero } from "@rocicorp/zero";
import {
  $,
  currentUser,
  newID,
  showSaving,
  showSignIn,
  showTodoPage,
} from "@weir/example-todo/client/page-user";
import { markSynced, renderTodoList, sortTodos } from "@weir/example-todo/client/todo-list-view";
import { NAMESPACE, type Todo } from "@weir/example-todo/schema";
import { mutators } from "../mutators.js";
import { queries } from "../queries.js";
import { schema } from "../schema.js";

// The Zero todo app in the browser: the stock client keeps the user's todos in IndexedDB,
// subscribes to the named query `allTodos`, and writes through the custom mutators. weir's
// Node host, on the same origin, answers the client's WebSocket at /todo/sync/v51/connect.

// The tab's user is remembered under this key (see page-user).
const USER_KEY = "weir-zero-todo-user";

function showTodos(user: string): void {
  const z = new Zero({
    cacheURL: `${location.origin}/${NAMESPACE}`,
    userID: user,
    // Development authentication on the server takes the credential as the user id.
    auth: user,
    schema,
    mutators,
    context: { userID: user },
    logLevel: "error",
  });

  const { list, empty, count, status, saved } = showTodoPage(user, USER_KEY);
  let todos: Todo[] = [];

  // The todos changed by mutations the server has not confirmed yet: one count per mutation,
  // down when its `.server` settles (confirmed, or refused and rolled back by the client).
  const pending = new Map<string, number>();
  const showPending = () => {
    markSynced(list, new Set(pending.keys()));
    let total = 0;
    for (const n of pending.values()) total += n;
    showSaving(saved, total);
  };
  const track = (id: string, result: { server: Promise<{ type: string; error?: unknown }> }) => {
    pending.set(id, (pending.get(id) ?? 0) + 1);
    showPending();
    void result.server.then((answer) => {
      if (answer.type === "error") console.error("the server refused a change", answer.error);
      const left = (pending.get(id) ?? 1) - 1;
      if (left > 0) pending.set(id, left);
      else pending.delete(id);
      showPending();
    });
  };

  const actions = {
    toggle: (todo: Todo) => track(todo.id, z.mutate(mutators.updateTodo({ id: todo.id, done: !todo.done }))),
    rename: (todo: Todo, text: string) =>
      track(todo.id, z.mutate(mutators.updateTodo({ id: todo.id, text }))),
    remove: (todo: Todo) => track(todo.id, z.mutate(mutators.deleteTodo({ id: todo.id }))),
  };

  const view = z.materialize(queries.allTodos());
  view.addListener((data, resultType) => {
    todos = sortTodos(data as readonly Todo[]);
    renderTodoList(list, todos, actions);
    showPending();
    // `complete`: the server sent every row of the query (until then the list shows the local copy).
    list.dataset.complete = String(resultType === "complete");
    empty.hidden = todos.length > 0;
    const left = todos.filter((todo) => !todo.done).length;
    count.textContent = `${left} ${left === 1 ? "item" : "items"} left`;
  });

  const showState = (state: { name: string }) => {
    const live = state.name === "connected";
    status.dataset.status = live ? "live" : state.name;
    status.textContent = live ? "live" : state.name;
  };
  showState(z.connection.state.current);
  z.connection.state.subscribe(showState);

  const form = $<HTMLFormElement>("form.new-todo");
  const input = $<HTMLInputElement>("form.new-todo input");
  form.onsubmit = (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    const sort = todos.reduce((max, todo) => Math.max(max, todo.sort), 0) + 1;
    const id = newID();
    track(id, z.mutate(mutators.createTodo({ id, text, done: false, sort })));
    input.value = "";
  };
  input.focus();
}

const user = currentUser(USER_KEY);
if (user) showTodos(user);
else showSignIn(USER_KEY);
