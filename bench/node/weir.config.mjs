// The weir server `pnpm bench node` measures: one table and the two mutators the load
// generator (`weir bench`) sends, the same ones the baseline backend implements.
export default {
  schema: {
    tables: {
      item: { columns: { id: "string", value: "number" }, primaryKey: ["id"] },
    },
  },
  mutators: {
    // One row per mutation, { id, value }.
    benchPut(tx, args) {
      tx.upsert("item", { id: args.id, value: args.value });
    },
    // Many rows per mutation, { prefix, start, count }: fills the table for the full pull.
    benchSeed(tx, { prefix, start, count }) {
      for (let i = 0; i < count; i++) tx.insert("item", { id: `${prefix}-${start + i}`, value: start + i });
    },
  },
  // The load generator sends a plain user id as the Authorization header.
  devAuth: true,
  // Every simulated client is the one user "bench", at many thousand requests a second: the
  // request quota is kept (its cost is measured) but made too large to refuse any of them.
  quotas: { requestUnits: 1_000_000_000 },
  // The wake figure's 500 sockets are that one user's too: more than a user holds by default.
  maxSocketsPerUser: 1_000,
};
