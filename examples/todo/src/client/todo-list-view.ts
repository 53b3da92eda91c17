import type { Todo } from "../schema.js";

export interface TodoActions {
  toggle(todo: Todo): void;
  rename(todo: Todo, text: string): void;
  remove(todo: Todo): void;
}

/** Orders todos as the list shows them: by `sort`, ties broken by id so every client agrees. */
export function sortTodos(todos: readonly Todo[]): Todo[] {
  return [...todos].sort((a, b) => a.sort - b.sort || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Renders the list, keeping one `<li>` per todo id so that an item being edited keeps its
 * input and focus while other rows change underneath it.
 */
export function renderTodoList(list: HTMLUListElement, todos: readonly Todo[], actions: TodoActions): void {
  const existing = new Map<string, HTMLLIElement>();
  for (const li of list.querySelectorAll<HTMLLIElement>(":scope > li")) {
    existing.set(li.dataset.id ?? "", li);
  }
  let previous: HTMLLIElement | null = null;
  for (const todo of sortTodos(todos)) {
    const li = existing.get(todo.id) ?? createItem(todo.id);
    existing.delete(todo.id);
    updateItem(li, todo, actions);
    const expected: ChildNode | null = previous ? previous.nextSibling : list.firstChild;
    if (expected !== li) list.insertBefore(li, expected);
    previous = li;
  }
  for (const li of existing.values()) li.remove();
}

/**
 * Marks each item whose todo a local mutation changed that the server has not confirmed yet
 * (`data-synced="false"`), and every other item `data-synced="true"`.
 */
export function markSynced(list: HTMLUListElement, pendingIDs: ReadonlySet<string>): void {
  for (const li of list.querySelectorAll<HTMLLIElement>(":scope > li")) {
    const synced = String(!pendingIDs.has(li.dataset.id ?? ""));
    if (li.dataset.synced !== synced) li.dataset.synced = synced;
  }
}

function createItem(id: string): HTMLLIElement {
  const li = document.createElement("li");
  li.dataset.id = id;
  const checkbox = document.createElement("input");
  checkbox.type = "checkbox";
  const text = document.createElement("span");
  text.className = "text";
  text.title = "Double-click to edit";
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "delete";
  remove.textContent = "×";
  li.append(checkbox, text, remove);
  return li;
}

// The handlers close over the latest todo, so they are reassigned on every render.
function updateItem(li: HTMLLIElement, todo: Todo, actions: TodoActions): void {
  const [checkbox, text, remove] = li.children as unknown as [
    HTMLInputElement,
    HTMLElement,
    HTMLButtonElement,
  ];
  li.classList.toggle("done", todo.done);
  checkbox.checked = todo.done;
  checkbox.setAttribute("aria-label", `Mark "${todo.text}" ${todo.done ? "not done" : "done"}`);
  checkbox.onchange = () => actions.toggle(todo);
  remove.setAttribute("aria-label", `Delete "${todo.text}"`);
  remove.onclick = () => actions.remove(todo);
  if (li.querySelector(".edit")) return;
  text.textContent = todo.text;
  text.ondblclick = () => startEditing(text, todo, actions);
}

function startEditing(text: HTMLElement, todo: Todo, actions: TodoActions): void {
  const input = document.createElement("input");
  input.className = "edit";
  input.value = todo.text;
  input.maxLength = 500;
  let finished = false;
  const finish = (save: boolean) => {
    if (finished) return;
    finished = true;
    const value = input.value.trim();
    input.replaceWith(text);
    if (save && value && value !== todo.text) {
      text.textContent = value;
      actions.rename(todo, value);
    }
  };
  input.onkeydown = (event) => {
    if (event.key === "Enter") finish(true);
    if (event.key === "Escape") finish(false);
  };
  input.onblur = () => finish(true);
  text.replaceWith(input);
  input.focus();
  input.select();
}
