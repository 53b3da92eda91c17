/**
 * A native weir client of one namespace: it keeps its cookie and the rows its pulls put and
 * delete, as a real client's store would (a `clear` empties it).
 */
export class SyncedClient {
  private cookie: number | null = null;
  /** Rows by table and key (`todo/"a"`). */
  private readonly held = new Map<string, { table: string; row: Record<string, unknown> }>();
  private readonly clientGroupID = `g-${Math.random().toString(36).slice(2, 10)}`;
  private readonly clientID = `c-${Math.random().toString(36).slice(2, 10)}`;

  constructor(
    readonly namespace: string,
    private readonly adminKey: string,
  ) {}

  /** An ingest pass (the admin route), then pulls until one brings nothing new. */
  async ingestAndPull(url: string): Promise<void> {
    const ingest = await fetch(`${url}/${this.namespace}/admin/ingest`, {
      method: "POST",
      headers: { "x-admin-key": this.adminKey },
    });
    await ingest.body?.cancel();
    for (let i = 0; i < 100; i++) {
      const response = await fetch(`${url}/${this.namespace}/pull`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "user" },
        body: JSON.stringify({
          clientGroupID: this.clientGroupID,
          clientID: this.clientID,
          cookie: this.cookie,
        }),
      });
      if (response.status !== 200)
        throw new Error(`pull answered ${response.status}: ${await response.text()}`);
      const answer = (await response.json()) as {
        cookie: number;
        unchanged?: boolean;
        rowsPatch?: {
          op: string;
          tableName?: string;
          value?: Record<string, unknown>;
          id?: Record<string, unknown>;
        }[];
      };
      const moved = answer.cookie !== this.cookie;
      this.cookie = answer.cookie;
      for (const op of answer.rowsPatch ?? []) {
        if (op.op === "clear") this.held.clear();
        else if (op.op === "put")
          this.held.set(keyOf(op.tableName!, op.value!), { table: op.tableName!, row: op.value! });
        else if (op.op === "del") this.held.delete(keyOf(op.tableName!, op.id!));
      }
      if (answer.unchanged || !moved) return;
    }
  }

  rows(table: string): Record<string, unknown>[] {
    return [...this.held.values()].filter((held) => held.table === table).map((held) => held.row);
  }
}

/** A row's key: its `id`, which every table of these tests has as its primary key. */
function keyOf(table: string, row: Record<string, unknown>): string {
  return `${table}/${JSON.stringify(row.id)}`;
}

/** JSON with every object's keys in order, to compare rows whatever order their columns came in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(
          Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : item,
  );
}
