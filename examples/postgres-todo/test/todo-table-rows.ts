import type { Todo } from "@weir/example-todo/schema";
import type { TestPostgres } from "@weir/postgres-testing";
import { sortById } from "./todo-client.js";

/** The `todo` table as PostgreSQL holds it (optionally one owner's rows), ordered as clients order them. */
export async function todoTableRows(db: TestPostgres, owner?: string): Promise<Todo[]> {
  const result = await db.sql(
    `SELECT id, owner, text, done, sort FROM todo ${owner === undefined ? "" : "WHERE owner = $1"}`,
    owner === undefined ? [] : [owner],
  );
  return sortById(result.rows as Todo[]);
}

/** Each client's last mutation id as the app server recorded it, by client id. */
export async function appClientIDs(db: TestPostgres): Promise<Map<string, number>> {
  const result = await db.sql("SELECT client_id, last_mutation_id FROM weir_app_clients");
  return new Map(result.rows.map((row) => [row.client_id as string, Number(row.last_mutation_id)]));
}
