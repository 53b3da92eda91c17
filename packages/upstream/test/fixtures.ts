import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Schema } from "@weir/protocol";

export const schema = {
  tables: {
    todo: { columns: { id: "string", owner: "string", done: "boolean", sort: "number" }, primaryKey: ["id"] },
    blob: {
      columns: {
        n: "integer",
        data: { type: "bytes", nullable: true },
        meta: { type: "json", nullable: true },
      },
      primaryKey: ["n"],
    },
  },
} satisfies Schema;

export function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), "weir-upstream-")), "app.sqlite");
}
