import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { todoSchema } from "../test/fixtures.js";
import { EngineError } from "./engine-error.js";
import { schemaText } from "./schema-text.js";
import { parseSchemaText, storedSchema } from "./stored-schema.js";
import type { Schema } from "./types.js";

const mixed: Schema = {
  tables: {
    item: {
      columns: { org: "string", id: "integer", note: { type: "json", nullable: true }, raw: "bytes" },
      primaryKey: ["org", "id"],
    },
    tag: { columns: { name: "string", weight: { type: "number", nullable: true } }, primaryKey: ["name"] },
  },
};

describe("parseSchemaText", () => {
  it("reads back what schemaText wrote, tables, keys, types and nullability in order", () => {
    for (const schema of [todoSchema, mixed]) {
      const parsed = parseSchemaText(schemaText(schema));
      expect(schemaText(parsed)).toBe(schemaText(schema));
      expect(Object.keys(parsed.tables)).toEqual(Object.keys(schema.tables));
    }
    expect(parseSchemaText(schemaText(mixed)).tables.item).toEqual({
      columns: { org: "string", id: "integer", note: { type: "json", nullable: true }, raw: "bytes" },
      primaryKey: ["org", "id"],
    });
  });

  it("refuses text it cannot read", () => {
    for (const text of ["", "todo|id", "todo|id|id:text:0", "todo|id|id:string:2", "todo|id|id:string:0|x"]) {
      expect(() => parseSchemaText(text)).toThrow(EngineError);
    }
  });
});

describe.each(DATABASES)("storedSchema on $kind", ({ open }) => {
  it("answers null before install, then the installed schema, which installs unchanged", async () => {
    const engine = await testEngine();
    const db = open();
    expect(storedSchema(db.adapter)).toBeNull();
    db.transaction(() => engine.install(db.adapter, mixed));
    const stored = storedSchema(db.adapter);
    expect(stored && schemaText(stored)).toBe(schemaText(mixed));
    expect(db.transaction(() => engine.install(db.adapter, stored!))).toEqual({ outcome: "unchanged" });
    db.close();
  });
});
