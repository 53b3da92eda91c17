/**
 * The config `weir init` writes: a runnable sample with a schema, mutators, visibility and
 * authentication. It imports nothing, so `weir serve` runs it before any install.
 */
export const CONFIG_TEMPLATE = `// weir configuration: what \`weir serve\` runs. Every namespace (the first path segment, as in
// POST /notes/pull) gets its own SQLite database file in dataDir.

export default {
  dataDir: ".data",

  // The tables clients sync. Column types: string, number, integer, boolean, json, bytes;
  // { type, nullable: true } for a nullable column.
  schema: {
    tables: {
      note: {
        columns: { id: "string", owner: "string", text: "string", done: "boolean" },
        primaryKey: ["id"],
      },
    },
  },

  // Named mutators, run on the server inside one SQLite transaction per mutation. They must be
  // synchronous; queue side effects (emails, webhooks) with tx.defer(fn) to run after commit.
  // To refuse a mutation with an application error, throw MutatorError from "@weir/node-host".
  mutators: {
    createNote(tx, { id, text }) {
      tx.insert("note", { id, owner: tx.claims.userID, text, done: false });
    },
    updateNote(tx, { id, text, done }) {
      const note = tx.get("note", id);
      if (!note || note.owner !== tx.claims.userID) return; // not this user's note: nothing to change
      tx.update("note", { id, ...(text === undefined ? {} : { text }), ...(done === undefined ? {} : { done }) });
    },
    deleteNote(tx, { id }) {
      const note = tx.get("note", id);
      if (note && note.owner === tx.claims.userID) tx.delete("note", id);
    },
  },

  // Which rows each user may see: an SQL condition per table, with bound parameters.
  visibility: (claims) => ({ note: { sql: "owner = ?", params: [claims.userID] } }),

  // Authentication: a JWT signed with HS256 by your app, its "sub" being the user id...
  jwt: process.env.WEIR_JWT_SECRET ? { secret: process.env.WEIR_JWT_SECRET } : undefined,
  // ...or, outside production only, the Authorization header taken as the user id, unverified.
  devAuth: !process.env.WEIR_JWT_SECRET && process.env.NODE_ENV !== "production",

  // Opens /<namespace>/admin/* to requests carrying this x-admin-key (at least 8 characters).
  adminKey: process.env.WEIR_ADMIN_KEY,

  // How many versions of the change log to keep; a client further behind resets.
  retainChanges: 100000,
};
`;
