import { readFileSync } from "node:fs";
import { engineWasmUrl, loadEngine, type Schema } from "@weir/engine-wasm";
import { betterSqliteAdapter } from "@weir/engine-wasm/better-sqlite3";
import Database from "better-sqlite3";

export const ITEM_SCHEMA: Schema = {
  tables: {
    item: { columns: { id: "string", value: "number" }, primaryKey: ["id"] },
    note: { columns: { id: "string", text: "string" }, primaryKey: ["id"] },
  },
};

/**
 * Writes a namespace database the way a host does, through the engine: `mutations` mutations
 * by one client, each upserting one of `distinctRows` item rows in its own transaction.
 */
export async function writeNamespaceDb(file: string, mutations: number, distinctRows = 10): Promise<void> {
  const engine = await loadEngine(readFileSync(engineWasmUrl));
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  const adapter = betterSqliteAdapter(db);
  db.transaction(() => engine.install(adapter, ITEM_SCHEMA))();
  db.transaction(() => engine.claimGroup(adapter, "group-1", "user-1"))();
  const upsert = db.prepare(
    "INSERT INTO item (id, value) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
  );
  for (let id = 1; id <= mutations; id++) {
    db.transaction(() => {
      const ref = { clientGroupID: "group-1", clientID: "client-1", mutationID: id };
      if (engine.preflight(adapter, ref).status !== "apply") throw new Error("unexpected preflight");
      upsert.run(`row-${id % distinctRows}`, id);
      engine.finalize(adapter, ref);
    })();
  }
  db.close();
}
