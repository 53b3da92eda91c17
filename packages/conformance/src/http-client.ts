import { checkAnswer } from "./answer-schemas.js";
import type { ConformanceTarget } from "./target.js";

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field by the tests
  json: any;
  headers: Headers;
}

export interface RequestOptions {
  user?: string;
  body?: unknown;
  /** Sent as is (no JSON encoding), for malformed bodies. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  adminKey?: string;
}

let counter = 0;

/** A namespace no other test uses. */
export function freshNamespace(prefix = "c"): string {
  counter++;
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}${counter}`;
}

/** Sends a request; the answer's body parsed as JSON (null when it is not JSON). */
export async function call(
  target: ConformanceTarget,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.user !== undefined) headers.authorization = await target.auth(options.user);
  if (options.adminKey !== undefined) headers["x-admin-key"] = options.adminKey;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers,
    body: body as BodyInit | undefined,
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  checkAnswer(method, path, response.status, json, text);
  return { status: response.status, json, headers: response.headers };
}

/** One namespace seen by one user through one client, in the native dialect. */
export class NativeClient {
  cookie: number | null = null;
  /** Rows by `<table>:<JSON of the key or row>`. */
  readonly rows = new Map<string, Record<string, unknown>>();
  lastMutationID = 0;
  private nextID = 1;

  constructor(
    readonly target: ConformanceTarget,
    readonly ns: string,
    readonly user: string,
    readonly clientGroupID = `g-${user}-${Math.random().toString(36).slice(2, 8)}`,
    readonly clientID = `c-${user}-${Math.random().toString(36).slice(2, 8)}`,
  ) {}

  pull(cookie: number | null = this.cookie): Promise<Answer> {
    return call(this.target, "POST", `/${this.ns}/pull`, {
      user: this.user,
      body: { clientGroupID: this.clientGroupID, clientID: this.clientID, cookie },
    });
  }

  /** Pulls until caught up, applying every patch; answers the pages. */
  async sync(): Promise<Answer[]> {
    const pages: Answer[] = [];
    for (let i = 0; i < 1000; i++) {
      const answer = await this.pull();
      if (answer.status !== 200)
        throw new Error(`pull answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      pages.push(answer);
      this.apply(answer.json);
      if (answer.json.unchanged) return pages;
    }
    throw new Error("pull never caught up");
  }

  apply(json: {
    cookie: number;
    unchanged?: boolean;
    lastMutationIDChanges?: Record<string, number>;
    rowsPatch?: Array<{ op: string; tableName?: string; value?: Record<string, unknown>; id?: unknown }>;
  }): void {
    this.cookie = json.cookie;
    if (json.unchanged) return;
    const last = json.lastMutationIDChanges?.[this.clientID];
    if (last !== undefined) this.lastMutationID = last;
    for (const op of json.rowsPatch ?? []) {
      if (op.op === "clear") this.rows.clear();
      else if (op.op === "put")
        this.rows.set(`${op.tableName}:${rowKey(op.tableName!, op.value!)}`, op.value!);
      else if (op.op === "del") this.rows.delete(`${op.tableName}:${JSON.stringify(op.id)}`);
    }
  }

  row(table: string, key: Record<string, unknown>): Record<string, unknown> | undefined {
    return this.rows.get(`${table}:${JSON.stringify(key)}`);
  }

  /** Pushes mutations with the next ids (or the ids given). */
  push(mutations: Array<{ name: string; args: unknown; id?: number }>, extra: Record<string, unknown> = {}) {
    return call(this.target, "POST", `/${this.ns}/push`, {
      user: this.user,
      body: {
        clientGroupID: this.clientGroupID,
        pushVersion: 1,
        mutations: mutations.map((m) => ({
          type: "custom",
          id: m.id ?? this.nextID++,
          clientID: this.clientID,
          name: m.name,
          args: [m.args],
          timestamp: 1,
        })),
        ...extra,
      },
    });
  }

  /** Sets the id the next pushed mutation gets. */
  nextMutationID(id: number): void {
    this.nextID = id;
  }
}

/** The key part of a row as the engine names it in `del`: the primary key columns in order. */
function rowKey(table: string, value: Record<string, unknown>): string {
  const keys: Record<string, string[]> = { todo: ["id"], item: ["a", "b"], card: ["id"] };
  const key: Record<string, unknown> = {};
  for (const column of keys[table] ?? Object.keys(value)) key[column] = value[column];
  return JSON.stringify(key);
}

export function admin(
  target: ConformanceTarget,
  ns: string,
  action: string,
  adminKey: string,
  body?: unknown,
  method = body === undefined ? "GET" : "POST",
): Promise<Answer> {
  return call(target, method, `/${ns}/admin/${action}`, { adminKey, body });
}
