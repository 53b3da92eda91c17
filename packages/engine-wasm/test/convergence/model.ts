// The server as the convergence test expects it: the rows, every state each had, and who could
// see each state.
import { cardID, SCORES, TODO_IDS, USERS, type Write } from "./workload.js";

type Todo = { id: string; owner: string; text: string; done: boolean; sort: number };
type Card = { id: number | bigint; uid: number; score: number; flag: boolean; label: string | null };
export type Row = { table: "todo"; value: Todo } | { table: "card"; value: Card };

/** Whether `user` may see the row under the filters above. */
function visibleTo(user: string, row: Row): boolean {
  if (row.table === "todo") return row.value.owner === user;
  const card = row.value;
  return String(card.uid) === user || (card.flag && card.score === SCORES[Number(user) - 1]);
}

const keyOf = (row: Row) => `${row.table}:${String(row.value.id)}`;
// Integers beyond 2^53 as strings, as parseBody reads them from a pull.
const stateText = (row: Row | undefined) =>
  row === undefined ? "absent" : JSON.stringify(row.value, jsonBig);
export function jsonBig(_: string, value: unknown) {
  return typeof value === "bigint" ? value.toString() : value;
}

/** The server as it should be: current rows, and what each user could ever see of each row. */
export class Model {
  version = 0;
  visibilityOn = true;
  readonly rows = new Map<string, Row>();
  /**
   * Per row: its committed states in order, with the users who could see each; `changed` is false
   * for an entry a visibility switch added (the row did not change).
   */
  readonly history = new Map<
    string,
    { version: number; state: string; seenBy: Set<string>; changed: boolean }[]
  >();
  /** Per row and user: every state text the user could ever see. */
  readonly everSeen = new Map<string, Set<string>>();
  /**
   * Per todo row: for each version that changed it, the owners its images had (before and after
   * each write), as the engine's change keys note them.
   */
  readonly owners = new Map<string, Map<number, Set<string>>>();
  /** Per client: the version of each processed mutation and the rows it touched. */
  readonly mutations = new Map<string, { version: number; rows: string[] }[]>();

  private seenBy(row: Row | undefined): Set<string> {
    const users = new Set<string>();
    if (row === undefined) return users;
    for (const user of USERS) if (!this.visibilityOn || visibleTo(user, row)) users.add(user);
    return users;
  }

  private record(key: string, changed = true): void {
    const row = this.rows.get(key);
    const seenBy = this.seenBy(row);
    const state = stateText(row);
    const list = this.history.get(key) ?? [];
    list.push({ version: this.version, state, seenBy, changed });
    this.history.set(key, list);
    for (const user of seenBy) {
      const seen = this.everSeen.get(`${user}|${key}`) ?? new Set();
      seen.add(state);
      this.everSeen.set(`${user}|${key}`, seen);
    }
  }

  /** One committed version of these writes; answers the rows it touched. */
  commit(writes: Write[], clientID?: string): string[] {
    const touched = new Set<string>();
    for (const w of writes) for (const key of this.apply(w)) touched.add(key);
    this.version++;
    for (const key of touched) this.record(key);
    if (clientID) {
      const list = this.mutations.get(clientID) ?? [];
      list.push({ version: this.version, rows: [...touched] });
      this.mutations.set(clientID, list);
    }
    return [...touched];
  }

  /** A new version with no row changes (an invalidation), or the visibility switch. */
  bump(toggleVisibility = false): void {
    this.version++;
    if (!toggleVisibility) return;
    this.visibilityOn = !this.visibilityOn;
    for (const key of this.rows.keys()) this.record(key, false);
  }

  /** Notes the owner of a todo row's image in the version being committed. */
  private image(key: string, row: Row | undefined): void {
    if (row?.table !== "todo") return;
    const versions = this.owners.get(key) ?? new Map<number, Set<string>>();
    const owners = versions.get(this.version + 1) ?? new Set<string>();
    owners.add(row.value.owner);
    versions.set(this.version + 1, owners);
    this.owners.set(key, versions);
  }

  private remove(key: string): boolean {
    this.image(key, this.rows.get(key));
    return this.rows.delete(key);
  }

  private apply(w: Write): string[] {
    const set = (row: Row) => {
      this.image(keyOf(row), this.rows.get(keyOf(row)));
      this.image(keyOf(row), row);
      this.rows.set(keyOf(row), row);
      return keyOf(row);
    };
    switch (w.kind) {
      case "todo":
        return [
          set({
            table: "todo",
            value: {
              id: TODO_IDS[w.id]!,
              owner: USERS[w.owner]!,
              text: w.text,
              done: w.text.length % 2 === 1,
              sort: w.text.length / 4,
            },
          }),
        ];
      case "deleteTodo": {
        const key = `todo:${TODO_IDS[w.id]}`;
        return this.remove(key) ? [key] : [];
      }
      case "card": {
        const existing = this.rows.get(`card:${String(cardID(w.id))}`);
        // An upsert updates uid, score and flag and keeps the label; a replace writes a new row.
        const label = w.how === "upsert" && existing?.table === "card" ? existing.value.label : null;
        return [
          set({
            table: "card",
            value: { id: cardID(w.id), uid: w.uid, score: SCORES[w.score]!, flag: w.flag, label },
          }),
        ];
      }
      case "moveCard": {
        const from = `card:${String(cardID(w.from))}`;
        const source = this.rows.get(from);
        if (source?.table !== "card" || w.from === w.to) return [];
        this.rows.delete(from);
        return [
          from,
          set({ table: "card", value: { ...source.value, id: cardID(w.to), label: `from ${w.from}` } }),
        ];
      }
      case "bulk": {
        const keys: string[] = [];
        for (let i = 0; i < w.count; i++) {
          keys.push(
            set({
              table: "todo",
              value: { id: `bulk${i}`, owner: USERS[w.owner]!, text: "b", done: false, sort: i },
            }),
          );
        }
        return keys;
      }
      case "deleteBulk": {
        const keys = [...this.rows.keys()].filter((key) => key.startsWith("todo:bulk"));
        for (const key of keys) this.remove(key);
        return keys;
      }
    }
  }

  /** The version of the row's first change after `cookie`. */
  firstChangeAfter(key: string, cookie: number): number | undefined {
    return this.history.get(key)?.find((entry) => entry.changed && entry.version > cookie)?.version;
  }

  /**
   * The version a pull by `user` from `cookie` answers the row at: its first change after the
   * cookie, or, for a todo row read through the filter's keys (`owner = ?`), its first change
   * after the cookie that one of its images was the user's in.
   */
  answeredAt(key: string, cookie: number, user: string): number | undefined {
    const versions = this.owners.get(key);
    if (!this.visibilityOn || versions === undefined) return this.firstChangeAfter(key, cookie);
    let first: number | undefined;
    for (const [version, owners] of versions) {
      if (version > cookie && owners.has(user) && (first === undefined || version < first)) first = version;
    }
    return first;
  }

  visibleRows(user: string): Map<string, string> {
    const rows = new Map<string, string>();
    for (const [key, row] of this.rows)
      if (!this.visibilityOn || visibleTo(user, row)) rows.set(key, stateText(row));
    return rows;
  }
}
