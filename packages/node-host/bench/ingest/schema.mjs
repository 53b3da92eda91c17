// The table the ingest benchmark replicates: a todo row of about 100 bytes as JSON.
export const SCHEMA = {
  tables: {
    todo: {
      columns: { id: "string", owner: "string", title: "string", done: "boolean", sort: "number" },
      primaryKey: ["id"],
    },
  },
};

export const NAMESPACE = "bench";
export const ADMIN_KEY = "bench-admin-key-0123";
export const NOTIFY_TOKEN = "bench-notify-token-0123";
export const UPSTREAM_TOKEN = "bench-upstream-token-0123";

/** Prints the one line a parent waits for: where the server listens. */
export function announce(url) {
  process.stdout.write(`${JSON.stringify({ url })}\n`);
}
