/** A small JSON client for the tests' own requests (the conformance suite has its own). */
export async function send(
  url: string,
  path: string,
  options: { method?: string; user?: string; body?: unknown; headers?: Record<string, string> } = {},
  // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field by the tests
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.user !== undefined) headers.authorization = options.user;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${url}${path}`, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json };
}

export const ADMIN = { "x-admin-key": "conformance-admin-key" };

export function push(url: string, ns: string, user: string, id: number, args: unknown, name = "createTodo") {
  return send(url, `/${ns}/push`, {
    user,
    body: {
      clientGroupID: `g-${user}`,
      pushVersion: 1,
      mutations: [{ type: "custom", id, clientID: `c-${user}`, name, args: [args], timestamp: 1 }],
    },
  });
}

export async function rows(url: string, ns: string, user: string): Promise<Array<Record<string, unknown>>> {
  const answer = await send(url, `/${ns}/pull`, {
    user,
    body: { clientGroupID: `g-${user}`, clientID: `c-${user}`, cookie: null },
  });
  if (answer.status !== 200)
    throw new Error(`pull answered ${answer.status}: ${JSON.stringify(answer.json)}`);
  return answer.json.rowsPatch
    .filter((op: { op: string }) => op.op === "put")
    .map((op: { value: object }) => op.value);
}

/** Waits for `check` to hold, polling; fails after `ms`. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition never held");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
