import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres/testing";
import { type PostgresTodo, startPostgresTodo } from "../src/start-postgres-todo.js";

export interface TodoStack {
  db: TestPostgres;
  todo: PostgresTodo;
  /** `<weir>/todo`, the namespace's routes. */
  base: string;
  close(): Promise<void>;
}

/**
 * A private PostgreSQL cluster (wal_level=logical) and the example in this process on free
 * loopback ports, with weir's files in a temporary directory.
 */
export async function startTodoStack(options: { pollMs?: number } = {}): Promise<TodoStack> {
  const db = await startPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), "postgres-todo-test-"));
  let todo: PostgresTodo;
  try {
    todo = await startPostgresTodo({
      databaseUrl: db.url,
      dataDir,
      logger: { log: () => {} },
      ...options,
    });
  } catch (error) {
    await db.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    db,
    todo,
    base: `${todo.url}/todo`,
    async close() {
      await todo.close();
      await db.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
