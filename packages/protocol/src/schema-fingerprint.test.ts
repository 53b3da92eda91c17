/// <reference types="node" />
import { createHash } from "node:crypto";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import { describe, expect, it } from "vitest";
import * as protocol from "./index.js";
import { PROTOCOL_VERSION } from "./version.js";

/**
 * The fingerprint of every wire schema, by protocol version. A schema change fails this test
 * until PROTOCOL_VERSION is bumped (with a line in its history) and the new fingerprint is added.
 */
const FINGERPRINTS: Record<number, string> = {
  1: "861fca6a527d26682324f0980bd3e823d8d7c70f09b7c38cf33eefb0b85578ee",
  2: "c31ffe787ebddc6d2fa468f283720cbdb4595639bf40dca4d3b5ddf618e53817",
  3: "20adc7de829760a1a572cf8fd7970898d9002b6c995e6bca1e91ae5bc2d6c989",
  4: "e9c4fad1386e6a12e887190cbb18f5d1a7835c5f048e75e6b5235a3c9ffbabae",
  5: "aa6e00c872932f309b5f3a70402363ed5e4b510f4822beb8b716e9c6aaa86f97",
  6: "574562be6d4dd7b29f2d7bea3153644b249d0f31c317af515df1c7289095f5bb",
  7: "0827cf2285e88f637f5b76697b7d4a341636a1c963d932aee9e40e5dc443757a",
  8: "1e023e5c27a7399a83cacd540c5433fcceb6b80053eec0cb95aed285cac90e6d",
};

function isSchema(value: unknown): value is GenericSchema {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "schema";
}

/** A table of schemas by message type (Zero's `[type, body]` messages, up and down). */
function isSchemaTable(value: unknown): value is Record<string, GenericSchema> {
  return (
    typeof value === "object" &&
    value !== null &&
    !isSchema(value) &&
    Object.values(value).length > 0 &&
    Object.values(value).every(isSchema)
  );
}

/**
 * Every exported schema, and every exported table of them by message type (so a message added
 * to or dropped from a dialect's unions changes it too).
 */
function fingerprint(): string {
  const entries: Array<[string, unknown]> = [];
  for (const [name, value] of Object.entries(protocol as Record<string, unknown>)) {
    if (isSchema(value)) entries.push([name, toJsonSchema(value, { errorMode: "ignore" })]);
    else if (isSchemaTable(value)) {
      for (const [type, schema] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) {
        entries.push([`${name}.${type}`, toJsonSchema(schema, { errorMode: "ignore" })]);
      }
    }
  }
  entries.sort(([a], [b]) => a.localeCompare(b));
  return createHash("sha256").update(JSON.stringify(entries)).digest("hex");
}

describe("wire schema fingerprint", () => {
  it("matches the one recorded for the current protocol version", () => {
    expect(fingerprint()).toBe(FINGERPRINTS[PROTOCOL_VERSION]);
  });
});
