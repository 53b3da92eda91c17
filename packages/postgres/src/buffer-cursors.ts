import type Database from "better-sqlite3";

/** The watermark a namespace last asked changes from, and when (epoch ms). */
export interface NamespaceCursor {
  watermark: bigint;
  at: number;
}

/** Remembers the watermark each namespace last asked from (shown in status, and woken later). */
export function saveCursors(db: Database.Database, cursors: Map<string, NamespaceCursor>): void {
  const upsert = db.prepare(
    "INSERT OR REPLACE INTO cursor (namespace, watermark, asked_at) VALUES (?, ?, ?)",
  );
  db.transaction(() => {
    for (const [namespace, cursor] of cursors) upsert.run(namespace, cursor.watermark, cursor.at);
  })();
}

/** The cursors saved last. */
export function loadCursors(db: Database.Database): Map<string, NamespaceCursor> {
  const rows = db.prepare("SELECT namespace, watermark, asked_at FROM cursor").all() as {
    namespace: string;
    watermark: bigint;
    asked_at: bigint;
  }[];
  return new Map(rows.map((row) => [row.namespace, { watermark: row.watermark, at: Number(row.asked_at) }]));
}
