import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonSliced } from "./sliced-json.js";

/** What JSON.parse gives for `text`: its value, or its error's message. */
function parsed(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

async function sliced(
  text: string,
  chunkChars: number,
  sliceChars: number,
): Promise<{ result: { value: unknown } | { error: string }; turns: number }> {
  let turns = 0;
  const turn = async () => {
    turns++;
  };
  try {
    return { result: { value: await parseJsonSliced(text, turn, { chunkChars, sliceChars }) }, turns };
  } catch (error) {
    return { result: { error: (error as Error).message }, turns };
  }
}

/** A value's members in order, keys included: equal values print alike, order and all. */
const printed = (result: { value: unknown } | { error: string }) =>
  "value" in result ? JSON.stringify(result.value) : `error ${result.error}`;

// Keys that JSON.parse treats apart: an own `__proto__`, integer keys (ordered first), repeats.
const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("__proto__", "0", "12", "a", "a"));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ maxLength: 6, unit: "binary" }),
    fc.string({ maxLength: 6, unit: fc.constantFrom('"', "\\", "[", "}", ",", ":", "a") }),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }).map((entries) => ({ entries })),
  ),
}));

/** The JSON text of a generated value, objects written member by member (repeated keys kept). */
function text(value: unknown, space: string): string {
  if (Array.isArray(value)) return `[${space}${value.map((v) => text(v, space)).join(`,${space}`)}${space}]`;
  if (value !== null && typeof value === "object" && "entries" in value) {
    const members = (value as { entries: Array<[string, unknown]> }).entries.map(
      ([k, v]) => `${JSON.stringify(k)}${space}:${space}${text(v, space)}`,
    );
    return `{${space}${members.join(`,${space}`)}${space}}`;
  }
  return JSON.stringify(value);
}

describe("parseJsonSliced", () => {
  it("gives what JSON.parse gives, however the text is cut", async () => {
    await fc.assert(
      fc.asyncProperty(
        json.value,
        fc.constantFrom("", " ", "\n\t ", "\r\n"),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 200 }),
        async (value, space, chunkChars, sliceChars) => {
          const source = text(value, space);
          const { result } = await sliced(source, chunkChars, sliceChars);
          expect(printed(result)).toBe(printed(parsed(source)));
          if ("value" in result) expect(result.value).toEqual(JSON.parse(source));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses what JSON.parse refuses, with its message (a character dropped, added or changed)", async () => {
    await fc.assert(
      fc.asyncProperty(
        json.value,
        fc.nat(),
        fc.constantFrom("", "[", "]", "{", "}", ",", ":", '"', "\\", "x", "1", " ", "\u00a0"),
        fc.boolean(),
        fc.integer({ min: 1, max: 32 }),
        async (value, at, insert, drop, chunkChars) => {
          const valid = text(value, " ");
          const i = at % (valid.length + 1);
          const source = valid.slice(0, i) + insert + valid.slice(drop ? i + 1 : i);
          const { result } = await sliced(source, chunkChars, 16);
          expect(printed(result)).toBe(printed(parsed(source)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("gives the event loop turns on a large text, and keeps `__proto__` an own member", async () => {
    const patch = Array.from({ length: 200 }, (_, q) => ({
      op: "put",
      hash: `h${q}`,
      // Quotes, backslashes and brackets in strings: the walk must not take them for structure.
      args: Array.from({ length: 50 }, (_, i) => `id-${q}-${i}\\"]}\\`),
    }));
    const source = `{"queries":{"patch":${JSON.stringify(patch)}},"__proto__":{"x":1}}`;
    const { result, turns } = await sliced(source, 1024, 8 * 1024);
    expect(turns).toBeGreaterThan(source.length / (16 * 1024));
    expect(printed(result)).toBe(printed(parsed(source)));
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.hasOwn(value, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});
