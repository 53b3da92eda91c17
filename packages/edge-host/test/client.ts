import { type Answer, CONFORMANCE_ADMIN_KEY, call } from "@weir/conformance";
/** The conformance suite's JSON client, for the tests' own requests to a Worker at `url`. */
export function send(
  url: string,
  path: string,
  options: { method?: string; user?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const target = { url, auth: (userID: string) => userID, close: async () => {} };
  const { method = options.body === undefined ? "GET" : "POST", ...rest } = options;
  return call(target, method, path, rest);
}

export const ADMIN = { "x-admin-key": CONFORMANCE_ADMIN_KEY };

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
