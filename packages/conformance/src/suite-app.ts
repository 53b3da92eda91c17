import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { encodeWatermark, MutateRequest, parse } from "@weir/protocol";
import { APP_CLIENTS_TABLE, applyMutations, type SqliteMutator } from "@weir/upstream";
import type { SuiteUpstream } from "./suite-upstream.js";

/** What the app does with the next call instead of applying it, when a test asks. */
export type AppMisbehaviour =
  | { kind: "down" }
  | { kind: "answer"; status: number; body: unknown; headers?: Record<string, string> }
  /** Applies the mutations, then answers without acknowledging the last one. */
  | { kind: "dropAck" }
  /** Applies the mutations, then answers after this long. */
  | { kind: "slow"; ms: number }
  /** Forgets every client's last mutation id first, as a restored app database would. */
  | { kind: "forgetClients" };

/** One call the app got. */
interface AppCall {
  namespace: string;
  authorization: string | null;
  mutationIDs: number[];
}

/**
 * The app's own server in delegated-push tests: its mutators write the suite upstream's database
 * (`@weir/upstream`'s applyMutations), so weir sees their effects through ingest.
 */
export interface SuiteApp {
  /** The mutate endpoint. */
  readonly url: string;
  readonly calls: AppCall[];
  readonly misbehave: AppMisbehaviour[];
  close(): Promise<void>;
}

/**
 * The caller's user: the conformance hosts authenticate with the user id itself, which a native
 * client sends as it is and the Zero dialect passes on as `Bearer <token>`.
 */
function owner(authorization: string | null): string {
  return (authorization ?? "").replace(/^Bearer /, "");
}

/** The conformance app's mutators, on the upstream's copy of its tables. */
const mutators: Record<string, SqliteMutator> = {
  /** A todo owned by the caller (the conformance hosts authenticate with the user id itself). */
  createTodo(db, args, context) {
    const { id, text } = args as { id: string; text?: string };
    db.prepare("INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, ?, 0, 0)").run(
      id,
      owner(context.authorization),
      text ?? "",
    );
  },
  /** `count` todos `<prefix>-<i>` in one mutation. */
  bulkCreate(db, args, context) {
    const { prefix, count } = args as { prefix: string; count: number };
    const insert = db.prepare("INSERT INTO todo (id, owner, text, done, sort) VALUES (?, ?, '', 0, ?)");
    for (let i = 0; i < count; i++) insert.run(`${prefix}-${i}`, owner(context.authorization), i);
  },
  refuse() {
    throw new Error("refused by the app");
  },
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(
    JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? encodeWatermark(value) : value)),
  );
}

export async function startSuiteApp(upstream: SuiteUpstream): Promise<SuiteApp> {
  const calls: AppCall[] = [];
  const misbehave: AppMisbehaviour[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const namespace = String(req.headers["x-weir-namespace"] ?? "");
    const authorization = req.headers.authorization ?? null;
    const request = parse(MutateRequest, JSON.parse(await readBody(req)));
    if (!request.ok) return send(res, 400, { error: "bad_request", message: request.message });
    calls.push({ namespace, authorization, mutationIDs: request.value.mutations.map((m) => m.id) });
    const next = misbehave.shift();
    if (next?.kind === "down") {
      res.socket?.destroy();
      return;
    }
    if (next?.kind === "answer") return send(res, next.status, next.body, next.headers);
    const source = upstream.namespace(namespace).source;
    if (next?.kind === "forgetClients") source.db.exec(`DELETE FROM ${APP_CLIENTS_TABLE}`);
    const answer = await applyMutations(source, mutators, request.value, { namespace, authorization });
    if (next?.kind === "dropAck" && "mutations" in answer) answer.mutations.pop();
    if (next?.kind === "slow") await new Promise((resolve) => setTimeout(resolve, next.ms));
    send(res, 200, answer);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: "internal", message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mutate`,
    calls,
    misbehave,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
