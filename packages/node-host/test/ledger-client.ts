/** A native-dialect client of the ledger server in fixtures/, as simple as a test can make it. */
export class LedgerClient {
  /** The last id the server acknowledged; the next push uses acked + 1. */
  acked = 0;
  cookie: number | null = null;
  lastMutationID = 0;
  readonly rows = new Map<string, Record<string, unknown>>();
  readonly clientGroupID: string;

  constructor(
    readonly clientID: string,
    readonly user = "ledger-user",
  ) {
    this.clientGroupID = `group-${clientID}`;
  }

  /** Pushes mutation `id` (default the next one); answers its result, throwing when the request fails. */
  async push(url: string, id = this.acked + 1): Promise<Record<string, unknown>> {
    const response = await fetch(`${url}/ledger/push`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: this.user },
      body: JSON.stringify({
        clientGroupID: this.clientGroupID,
        pushVersion: 1,
        mutations: [
          {
            type: "custom",
            id,
            clientID: this.clientID,
            name: "append",
            args: [{ id: `${this.clientID}-${id}`, n: id }],
          },
        ],
      }),
    });
    if (response.status !== 200)
      throw new Error(`push answered ${response.status}: ${await response.text()}`);
    const json = (await response.json()) as {
      pushResponse: { mutations: Array<{ result: Record<string, unknown> }> };
    };
    const result = json.pushResponse.mutations[0]!.result;
    if (id > this.acked) this.acked = id;
    return result;
  }

  /** Pulls until caught up. */
  async sync(url: string): Promise<void> {
    for (;;) {
      const response = await fetch(`${url}/ledger/pull`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: this.user },
        body: JSON.stringify({
          clientGroupID: this.clientGroupID,
          clientID: this.clientID,
          cookie: this.cookie,
        }),
      });
      if (response.status !== 200)
        throw new Error(`pull answered ${response.status}: ${await response.text()}`);
      const json = (await response.json()) as {
        cookie: number;
        unchanged?: true;
        lastMutationIDChanges?: Record<string, number>;
        rowsPatch?: Array<{
          op: string;
          tableName: string;
          value: Record<string, unknown>;
          id: Record<string, unknown>;
        }>;
      };
      this.cookie = json.cookie;
      if (json.unchanged) return;
      this.lastMutationID = json.lastMutationIDChanges?.[this.clientID] ?? this.lastMutationID;
      for (const op of json.rowsPatch ?? []) {
        if (op.op === "clear") this.rows.clear();
        if (op.op === "put") this.rows.set(`${op.tableName}/${op.value.id}`, op.value);
        if (op.op === "del") this.rows.delete(`${op.tableName}/${op.id.id}`);
      }
    }
  }
}
