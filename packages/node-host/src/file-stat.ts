import { type Stats, statSync } from "node:fs";

/** A file's stat, or null when there is no such file. */
export function statOf(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
