import type pg from "pg";
import type { PgType } from "./column-codec.js";

interface TypeRow {
  oid: number;
  typname: string;
  nspname: string;
  typtype: string;
  typelem: number;
  typbasetype: number;
}

/** Reads the types of `oids` and what they refer to (domain bases, array elements). */
export async function readTypes(client: pg.ClientBase, oids: number[]): Promise<Map<number, PgType>> {
  const rows = new Map<number, TypeRow>();
  let missing = [...new Set(oids)];
  while (missing.length > 0) {
    const { rows: found } = await client.query<TypeRow>(
      `SELECT t.oid::int AS oid, t.typname, n.nspname, t.typtype, t.typelem::int AS typelem,
              t.typbasetype::int AS typbasetype
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = ANY($1::oid[])`,
      [missing],
    );
    for (const row of found) rows.set(row.oid, row);
    missing = found
      .flatMap((row) => [row.typelem, row.typbasetype])
      .filter((oid) => oid !== 0 && !rows.has(oid));
  }
  const resolve = (oid: number, depth = 0): PgType => {
    const row = rows.get(oid);
    if (!row || depth > 16) return { name: `oid ${oid}`, schema: "", kind: "?" };
    if (row.typtype === "d") return resolve(row.typbasetype, depth + 1);
    // An array type has typelem set and its name starts with `_` (a fixed-length type such as
    // `name` also has typelem, but is no array).
    if (row.typelem !== 0 && row.typname.startsWith("_")) {
      return {
        name: row.typname,
        schema: row.nspname,
        kind: row.typtype,
        element: resolve(row.typelem, depth + 1),
      };
    }
    return { name: row.typname, schema: row.nspname, kind: row.typtype };
  };
  return new Map(oids.map((oid) => [oid, resolve(oid)]));
}
