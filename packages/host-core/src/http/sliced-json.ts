// One JSON.parse of a body of a few MiB holds the thread for tens of milliseconds, and every
// namespace its thread serves waits. A large body is parsed in slices instead: its outer arrays
// and objects are walked here, and what they hold is given to JSON.parse a run of members at a
// time, the event loop having its turn between slices. The value is the one JSON.parse gives.

/** Texts at least this long are parsed in slices (a shorter one holds the thread a millisecond or two). */
export const SLICED_JSON_CHARS = 256 * 1024;

/** How a text is cut: members of at most `chunkChars` are parsed together, `sliceChars` a turn. */
export interface JsonSlicing {
  readonly chunkChars: number;
  readonly sliceChars: number;
}

const DEFAULT_SLICING: JsonSlicing = { chunkChars: 32 * 1024, sliceChars: 128 * 1024 };

/** The text is not JSON: JSON.parse of the whole says why, as an unsliced parse would. */
class Malformed extends Error {}

/** Arrays and objects nested deeper are parsed whole. */
const MAX_DEPTH = 16;

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const STRUCTURE = /["[\]{}]/g;
const PRIMITIVE_END = /[,\]}\s]/g;

/**
 * `JSON.parse(text)`, giving the event loop `turn` after each slice of `slicing.sliceChars`
 * characters. Throws what JSON.parse throws for a text that is not JSON.
 */
export async function parseJsonSliced(
  text: string,
  turn: () => Promise<void>,
  slicing: JsonSlicing = DEFAULT_SLICING,
): Promise<unknown> {
  try {
    return await new SlicedParser(text, turn, slicing).parse();
  } catch (error) {
    if (error instanceof Malformed || error instanceof SyntaxError) return JSON.parse(text);
    throw error;
  }
}

class SlicedParser {
  /** Characters handled since the last turn. */
  private handled = 0;

  constructor(
    private readonly text: string,
    private readonly turn: () => Promise<void>,
    private readonly slicing: JsonSlicing,
  ) {}

  async parse(): Promise<unknown> {
    const start = this.skipSpace(0);
    const open = this.text[start];
    let value: unknown;
    let end: number;
    if ((open === "[" || open === "{") && this.containerEnd(start, this.slicing.chunkChars) < 0) {
      [value, end] = await this.container(start, 1);
    } else return JSON.parse(this.text);
    if (this.skipSpace(end) !== this.text.length) throw new Malformed();
    return value;
  }

  /** The array at `start` (its `[`), and where it ends. */
  private async array(start: number, depth: number): Promise<[unknown[], number]> {
    const items: unknown[] = [];
    let at = this.skipSpace(start + 1);
    if (this.text[at] === "]") return [items, at + 1];
    // A run of small members, parsed together.
    let run = -1;
    let runEnd = -1;
    const flush = () => {
      if (run < 0) return;
      const parsed = this.leaf(`[${this.text.slice(run, runEnd)}]`) as unknown[];
      for (const item of parsed) items.push(item);
      run = -1;
    };
    for (;;) {
      const end = this.memberEnd(at, depth);
      if (end < 0) {
        flush();
        const [item, after] = await this.container(at, depth + 1);
        items.push(item);
        at = after;
      } else {
        if (run < 0) run = at;
        runEnd = end;
        at = end;
        if (runEnd - run >= this.slicing.chunkChars) flush();
      }
      at = this.skipSpace(at);
      const next = this.text[at];
      if (next === "]") {
        flush();
        return [items, at + 1];
      }
      if (next !== ",") throw new Malformed();
      at = this.skipSpace(at + 1);
      if (this.handled >= this.slicing.sliceChars) await this.nextTurn();
    }
  }

  /** The object at `start` (its `{`), and where it ends. */
  private async object(start: number, depth: number): Promise<[Record<string, unknown>, number]> {
    const object: Record<string, unknown> = {};
    let at = this.skipSpace(start + 1);
    if (this.text[at] === "}") return [object, at + 1];
    let run = -1;
    let runEnd = -1;
    const flush = () => {
      if (run < 0) return;
      const parsed = this.leaf(`{${this.text.slice(run, runEnd)}}`) as Record<string, unknown>;
      for (const key of Object.keys(parsed)) set(object, key, parsed[key]);
      run = -1;
    };
    for (;;) {
      if (this.text[at] !== '"') throw new Malformed();
      const keyEnd = this.stringEnd(at);
      const colon = this.skipSpace(keyEnd);
      if (this.text[colon] !== ":") throw new Malformed();
      const valueStart = this.skipSpace(colon + 1);
      const end = this.memberEnd(valueStart, depth);
      if (end < 0) {
        flush();
        const key = this.leaf(this.text.slice(at, keyEnd)) as string;
        const [value, after] = await this.container(valueStart, depth + 1);
        set(object, key, value);
        at = after;
      } else {
        if (run < 0) run = at;
        runEnd = end;
        at = end;
        if (runEnd - run >= this.slicing.chunkChars) flush();
      }
      at = this.skipSpace(at);
      const next = this.text[at];
      if (next === "}") {
        flush();
        return [object, at + 1];
      }
      if (next !== ",") throw new Malformed();
      at = this.skipSpace(at + 1);
      if (this.handled >= this.slicing.sliceChars) await this.nextTurn();
    }
  }

  private container(start: number, depth: number): Promise<[unknown, number]> {
    return this.text[start] === "[" ? this.array(start, depth) : this.object(start, depth);
  }

  /**
   * Where the member at `start` ends, or -1 for an array or object too long to parse as one (one
   * nested deeper than MAX_DEPTH is parsed as one: walking each level costs a scan of a chunk).
   */
  private memberEnd(start: number, depth: number): number {
    const first = this.text[start];
    if (first === "[" || first === "{")
      return this.containerEnd(start, depth < MAX_DEPTH ? this.slicing.chunkChars : Number.POSITIVE_INFINITY);
    if (first === '"') return this.stringEnd(start);
    PRIMITIVE_END.lastIndex = start;
    const end = PRIMITIVE_END.exec(this.text)?.index ?? this.text.length;
    if (end === start) throw new Malformed();
    this.handled += end - start;
    return end;
  }

  /** Where the array or object at `start` ends, or -1 when that is past `limit` characters. */
  private containerEnd(start: number, limit: number): number {
    let depth = 0;
    let at = start;
    for (;;) {
      STRUCTURE.lastIndex = at;
      const found = STRUCTURE.exec(this.text);
      if (found === null) throw new Malformed();
      at = found.index;
      if (at - start > limit) {
        this.handled += at - start;
        return -1;
      }
      const char = found[0];
      if (char === '"') {
        at = this.stringEnd(at);
        continue;
      }
      at++;
      if (char === "[" || char === "{") depth++;
      else if (--depth === 0) {
        this.handled += at - start;
        return at;
      }
    }
  }

  /** Where the string at `start` (its opening quote) ends, after its closing quote. */
  private stringEnd(start: number): number {
    let from = start + 1;
    for (;;) {
      const quote = this.text.indexOf('"', from);
      if (quote < 0) throw new Malformed();
      let slash = quote - 1;
      while (this.text[slash] === "\\") slash--;
      if ((quote - 1 - slash) % 2 === 0) {
        this.handled += quote + 1 - start;
        return quote + 1;
      }
      from = quote + 1;
    }
  }

  private skipSpace(at: number): number {
    while (at < this.text.length && WHITESPACE.has(this.text[at]!)) at++;
    return at;
  }

  private leaf(text: string): unknown {
    this.handled += text.length;
    return JSON.parse(text);
  }

  private nextTurn(): Promise<void> {
    this.handled = 0;
    return this.turn();
  }
}

/** Sets a member as JSON.parse does (`__proto__` an own member, not the prototype). */
function set(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else object[key] = value;
}
