import { Client } from "undici";

export type BenchDialect = "replicache" | "native";

export interface BenchMutation {
  clientID: string;
  id: number;
  name: string;
  args: unknown;
}

export interface PullAnswer {
  cookie: unknown;
  /** True when the answer carries no patch (the caller is caught up). */
  caughtUp: boolean;
  puts: number;
  dels: number;
}

/** Thrown for an answer the load generator cannot count as a success. */
class BenchRequestError extends Error {
  override readonly name = "BenchRequestError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * One simulated client's connection to a namespace, speaking either wire dialect. Each client
 * keeps its own keep-alive connection, as a browser tab would.
 */
export class SyncTarget {
  private readonly client: Client;
  private readonly base: string;

  constructor(
    readonly url: URL,
    readonly dialect: BenchDialect,
    private readonly auth: string,
  ) {
    this.client = new Client(url.origin, {
      keepAliveTimeout: 60_000,
      bodyTimeout: 120_000,
      headersTimeout: 120_000,
    });
    this.base = `${url.pathname}${dialect === "replicache" ? "/replicache" : ""}`;
  }

  async push(clientGroupID: string, mutations: readonly BenchMutation[]): Promise<void> {
    const now = Date.now();
    const body =
      this.dialect === "replicache"
        ? {
            pushVersion: 1,
            clientGroupID,
            profileID: "bench",
            schemaVersion: "",
            mutations: mutations.map((m) => ({ ...m, timestamp: now })),
          }
        : {
            pushVersion: 1,
            clientGroupID,
            mutations: mutations.map((m) => ({ type: "custom", ...m, args: [m.args], timestamp: now })),
          };
    const text = await this.post("push", body);
    if (this.dialect === "native") checkNativePush(text);
  }

  async pull(clientGroupID: string, clientID: string, cookie: unknown): Promise<PullAnswer> {
    const body =
      this.dialect === "replicache"
        ? { pullVersion: 1, clientGroupID, cookie, profileID: "bench", schemaVersion: "" }
        : { clientGroupID, clientID, cookie };
    const answer = JSON.parse(await this.post("pull", body)) as {
      cookie: unknown;
      unchanged?: boolean;
      patch?: { op: string }[];
      rowsPatch?: { op: string }[];
    };
    const patch = answer.patch ?? answer.rowsPatch ?? [];
    let puts = 0;
    let dels = 0;
    for (const op of patch) {
      if (op.op === "put") puts++;
      else if (op.op === "del") dels++;
    }
    return { cookie: answer.cookie, caughtUp: answer.unchanged === true || patch.length === 0, puts, dels };
  }

  private async post(route: string, body: unknown): Promise<string> {
    const response = await this.client.request({
      method: "POST",
      path: `${this.base}/${route}`,
      headers: { "content-type": "application/json", authorization: this.auth },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) {
      throw new BenchRequestError(
        `${route} answered ${response.statusCode}: ${text.slice(0, 200)}`,
        response.statusCode,
      );
    }
    return text;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/** A native push answers 200 even when it failed or a mutator refused: look inside. */
function checkNativePush(text: string): void {
  const answer = JSON.parse(text) as {
    pushResponse?: { kind?: string; reason?: string; mutations?: { result?: { error?: string } }[] };
  };
  const response = answer.pushResponse;
  if (!response) throw new BenchRequestError("push answer has no pushResponse", 200);
  if (response.kind === "PushFailed") throw new BenchRequestError(`push failed: ${response.reason}`, 200);
  const refused = response.mutations?.find((m) => m.result?.error);
  if (refused) throw new BenchRequestError(`mutation answered ${refused.result?.error}`, 200);
}
