import type { TestPostgres } from "@weir/postgres-testing";
import { sortByKey, waitFor } from "./namespace-model.js";
import { canonicalJson, type SyncedClient } from "./synced-client.js";

type Row = Record<string, unknown>;

/** The rows of `table` a namespace receives: those whose tenant column holds its name, or all. */
export async function tenantRows(
  db: TestPostgres,
  table: string,
  tenantColumn: string | null,
  namespace: string,
): Promise<Row[]> {
  const where = tenantColumn === null ? "true" : `${tenantColumn} = $1`;
  const { rows } = await db.sql(
    `SELECT to_jsonb(t) AS row FROM ${table} t WHERE ${where}`,
    tenantColumn === null ? [] : [namespace],
  );
  return sortByKey(
    rows.map((row) => row.row as Row),
    ["id"],
  );
}

/**
 * Ingests and pulls each client until it holds exactly what `expected` gives for its namespace in
 * every one of `tables`; fails after 20 s naming the first table that differs.
 */
export async function expectConverged(
  url: string,
  clients: SyncedClient[],
  tables: string[],
  expected: (table: string, namespace: string) => Promise<Row[]>,
): Promise<void> {
  for (const client of clients) {
    let last = "";
    await waitFor(
      async () => {
        await client.ingestAndPull(url);
        for (const table of tables) {
          const want = await expected(table, client.namespace);
          const held = sortByKey(client.rows(table), ["id"]);
          last = `${client.namespace}.${table}: ${held.length} rows held, ${want.length} in PostgreSQL; ${canonicalJson(held).slice(0, 300)} vs ${canonicalJson(want).slice(0, 300)}`;
          if (canonicalJson(held) !== canonicalJson(want)) return false;
        }
        return true;
      },
      20_000,
      "convergence",
    ).catch((error) => {
      throw new Error(`${(error as Error).message}: ${last}`);
    });
  }
}
