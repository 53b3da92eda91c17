// Row filters built by the host from the caller's claims. The loader passes them as
// "<table>\x01<param count>\x01<sql>[\x01<column>:<param>,...]" entries joined by "\x02"; their values stay on the host
// side and are referred to by position (`{"$":k}`), so no value is ever spliced into SQL.

import { FILTER_ENTRY_SEPARATOR, FILTER_FIELD_SEPARATOR } from "../src/abi";
import { extraParam } from "./text";

const ALL_ROWS = "1";

/** A `column = ?` key that narrows a filter: its column, and its value as an extra parameter. */
export class FilterKey {
  constructor(
    public column: string,
    public param: i32,
  ) {}
}

export class Filter {
  /**
   * The keys one of which every row the filter admits holds (see src/visibility-terms.ts); empty
   * when the filter cannot be narrowed so.
   */
  keys: Array<FilterKey> = [] as FilterKey[];

  constructor(
    public sql: string,
    public firstParam: i32,
    public paramCount: i32,
  ) {}

  /** Whether the filter lets every row through (the table has none). */
  isAll(): bool {
    return this.sql == ALL_ROWS;
  }

  /** The filter as a parenthesized SQL condition. */
  condition(): string {
    return "(" + this.sql + ")";
  }

  /** Adds the references to this filter's values, in the order its `?` appear. */
  addParams(into: Array<string>): void {
    for (let i = 0; i < this.paramCount; i++) into.push(extraParam(this.firstParam + i));
  }
}

export class Visibility {
  names: Array<string> = [] as string[];
  filters: Array<Filter> = [] as Filter[];

  filterFor(table: string): Filter {
    for (let i = 0; i < this.names.length; i++) {
      if (this.names[i] == table) return this.filters[i];
    }
    return new Filter(ALL_ROWS, 0, 0);
  }
}

export function parseVisibility(text: string): Visibility {
  const visibility = new Visibility();
  if (text.length == 0) return visibility;
  const entries = text.split(FILTER_ENTRY_SEPARATOR);
  let next: i32 = 0;
  for (let i = 0; i < entries.length; i++) {
    const fields = entries[i].split(FILTER_FIELD_SEPARATOR);
    const count = I32.parseInt(fields[1], 10);
    visibility.names.push(fields[0]);
    const filter = new Filter(fields[2], next, count);
    if (fields.length > 3 && fields[3].length > 0) {
      const keys = fields[3].split(",");
      for (let k = 0; k < keys.length; k++) {
        const colon = keys[k].lastIndexOf(":");
        const param = I32.parseInt(keys[k].substring(colon + 1), 10);
        filter.keys.push(new FilterKey(keys[k].substring(0, colon), next + param));
      }
    }
    visibility.filters.push(filter);
    next += count;
  }
  return visibility;
}
