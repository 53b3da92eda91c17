import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { type PostgresTodo, startPostgresTodo } from "../src/start-postgres-todo.js";

export interface TodoStack {
  db: TestPostgres;
  todo: PostgresTodo;
  /** `<weir>/todo`, the namespace's routes. */
  base: string;
  /**
   * Stops the example gracefully, runs `whileDown`, and starts it again on the same database and
   * files (on new ports).
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * A private PostgreSQL cluster (wal_level=logical) and the example in this process on free
 * loopback ports, with weir's files in a temporary directory.
 */
export async function startTodoStack(
  options: { pollMs?: number; adminKey?: string } = {},
): Promise<TodoStack> {
  const db = await startPostgres();
  const tempDir = mkdtempSync(join(tmpdir(), "postgres-todo-test-"));
  // A directory that does not exist yet: the example makes it.
  const dataDir = join(tempDir, "data");
  const start = () =>
    startPostgresTodo({ databaseUrl: db.url, dataDir, logger: { log: () => {} }, ...options });
  let todo: PostgresTodo;
  try {
    todo = await start();
  } catch (error) {
    await db.stop();
    rmSync(tempDir, { recursive: true, force: true });
    throw error;
  }
  const stack: TodoStack = {
    db,
    todo,
    base: `${todo.url}/todo`,
    async restart(whileDown) {
      await stack.todo.close();
      await whileDown?.();
      stack.todo = await start();
      stack.base = `${stack.todo.url}/todo`;
    },
    async close() {
      await stack.todo.close();
      await db.stop();
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
  return stack;
}
