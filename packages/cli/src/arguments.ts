import { InvalidArgumentError } from "commander";

/** Option parsers: a bad value is a usage error (exit 2) with the parser's message. */
export function integerArg(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const value = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `expected an integer >= ${min}`
          : `expected an integer ${min}..${max}`,
      );
    }
    return value;
  };
}

export function nonNegativeSecondsArg(text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError("expected a number of seconds >= 0");
  }
  return value;
}

export function secondsArg(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new InvalidArgumentError("expected a positive number of seconds");
  return value;
}

/**
 * A namespace URL such as `http://127.0.0.1:4848/todo`: every route of one namespace lives
 * under it. Answers it without a trailing slash.
 */
export function namespaceUrlArg(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError("expected a namespace URL such as http://127.0.0.1:4848/todo");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidArgumentError("expected an http:// or https:// URL");
  }
  url.pathname = url.pathname.replace(/\/+$/, "");
  if (url.pathname === "" || url.pathname === "/") {
    throw new InvalidArgumentError("the URL must name a namespace, as in http://127.0.0.1:4848/todo");
  }
  url.search = "";
  url.hash = "";
  return url;
}
