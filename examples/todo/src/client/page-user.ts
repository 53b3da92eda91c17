// The parts of a todo page that are not about syncing: finding its elements, the user of the tab
// and its sign-in form, and ids made in the browser. Shared by the todo apps of the examples.

export function $<T extends Element>(selector: string): T {
  const element = document.querySelector<T>(selector);
  if (!element) throw new Error(`missing ${selector}`);
  return element;
}

/**
 * The tab's user: `?user=` picks one for this tab (handy for two users side by side); otherwise
 * the name entered once is remembered under `storageKey`.
 */
export function currentUser(storageKey: string): string | null {
  const fromUrl = new URLSearchParams(location.search).get("user")?.trim();
  return fromUrl || localStorage.getItem(storageKey);
}

export function showSignIn(storageKey: string): void {
  const form = $<HTMLFormElement>("form.sign-in");
  form.hidden = false;
  form.onsubmit = (event) => {
    event.preventDefault();
    const user = new FormData(form).get("user")?.toString().trim();
    if (!user) return;
    localStorage.setItem(storageKey, user);
    location.reload();
  };
  $<HTMLInputElement>("form.sign-in input").focus();
}

export function signOut(storageKey: string): void {
  localStorage.removeItem(storageKey);
  const url = new URL(location.href);
  url.searchParams.delete("user");
  location.assign(url);
}

/** Ids are made in the browser so a todo exists (and can be edited) before the server hears of it. */
export function newID(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The page's parts that show the todos, once the signed-in view is up. */
export interface TodoPage {
  list: HTMLUListElement;
  empty: HTMLElement;
  count: HTMLElement;
  status: HTMLElement;
  saved: HTMLElement;
}

/** Shows the signed-in view for `user` (its sign-out forgets `storageKey`) and answers its parts. */
export function showTodoPage(user: string, storageKey: string): TodoPage {
  $<HTMLElement>("[data-user]").textContent = user;
  $<HTMLElement>(".who").hidden = false;
  $<HTMLButtonElement>("[data-sign-out]").onclick = () => signOut(storageKey);
  $<HTMLElement>("section.todos").hidden = false;
  return {
    list: $<HTMLUListElement>("ul.todo-list"),
    empty: $<HTMLElement>("p.empty"),
    count: $<HTMLElement>("[data-count]"),
    status: $<HTMLElement>("[data-status]"),
    saved: $<HTMLElement>("[data-saved]"),
  };
}

/** Says how many changes the server has not confirmed yet. */
export function showSaving(saved: HTMLElement, pending: number): void {
  saved.dataset.saved = String(pending === 0);
  saved.textContent =
    pending === 0 ? "all saved" : `saving ${pending} ${pending === 1 ? "change" : "changes"}`;
}
