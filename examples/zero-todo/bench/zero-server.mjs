// The server of `pnpm bench zero`: weir's Node host (a file database in a temporary folder)
// with the todo table, a createTodo mutator, the `allTodos` named query and per-user
// visibility. Prints {"url"}.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "@weir/node-host";

const dataDir = mkdtempSync(join(tmpdir(), "weir-bench-zero-"));

const server = createServer({
  schema: {
    tables: {
      todo: {
        columns: { id: "string", owner: "string", text: "string", done: "boolean", sort: "number" },
        primaryKey: ["id"],
      },
    },
  },
  mutators: {
    createTodo(tx, args) {
      tx.insert("todo", { ...args, owner: tx.claims.userID });
    },
  },
  queries: { allTodos: () => ({ table: "todo", orderBy: [["sort", "asc"]] }) },
  visibility: (claims) => ({ todo: { sql: "owner = ?", params: [claims.userID] } }),
  devAuth: true,
  // The fan-out figures connect 200 clients of one user: more than a user holds by default.
  maxSocketsPerUser: 1_000,
  dataDir,
  logger: { log: () => {} },
});
const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.on("SIGTERM", () =>
  server.close().then(() => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }),
);
