import type { QuotaCount, QuotaStore } from "@weir/host-core";
import type Database from "better-sqlite3";

/**
 * Request quotas' spends in a SQLite database (the data directory's catalog), shared by every
 * process serving that directory and kept across restarts. Each `add` is one transaction; windows
 * older than the one before are deleted as keys move on.
 */
export function sqliteQuotaStore(db: Database.Database): QuotaStore {
  const add = db.prepare<[string, number, number]>(
    "INSERT INTO quota_spend (key, win, units) VALUES (?, ?, ?) " +
      "ON CONFLICT (key, win) DO UPDATE SET units = units + excluded.units",
  );
  const read = db.prepare<[number, number, string, number], { current: number; previous: number }>(
    "SELECT coalesce(sum(units) FILTER (WHERE win = ?), 0) AS current, " +
      "coalesce(sum(units) FILTER (WHERE win = ?), 0) AS previous FROM quota_spend WHERE key = ? AND win >= ?",
  );
  const prune = db.prepare<[string, number]>("DELETE FROM quota_spend WHERE key = ? AND win < ?");
  const run = db.transaction((spends: Parameters<QuotaStore["add"]>[0]): QuotaCount[] =>
    spends.map(({ key, window, units }) => {
      add.run(key, window, units);
      prune.run(key, window - 1);
      const counts = read.get(window, window - 1, key, window - 1)!;
      return { key, current: counts.current, previous: counts.previous };
    }),
  );
  // Immediate: two processes that both read before writing would otherwise wait on each other.
  return { add: (spends) => run.immediate(spends) };
}
