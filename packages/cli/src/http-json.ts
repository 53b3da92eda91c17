import { CliError } from "./cli-error.js";

export interface JsonRequest {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: unknown;
  /** Gives up after this long. Default 30 s. */
  timeoutMs?: number;
}

/**
 * Sends a JSON request and answers the parsed JSON body. A network failure, a non-2xx status or
 * a body that is not JSON becomes a CliError whose message carries the server's own
 * `{error, message}` when it sent one.
 */
export async function requestJson(url: URL, request: JsonRequest): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs ?? 30_000),
    });
  } catch (error) {
    throw new CliError(`cannot reach ${url.origin}: ${describeFetchError(error)}`, "unreachable");
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? {} : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const server = body as { error?: unknown; message?: unknown } | undefined;
    const detail =
      typeof server?.message === "string"
        ? `${String(server.error ?? "error")}: ${server.message}`
        : text.slice(0, 200) || response.statusText;
    throw new CliError(
      `${request.method} ${url.pathname} answered ${response.status} (${detail})`,
      "http_error",
      1,
      {
        status: response.status,
        ...(server && typeof server === "object" ? { server } : {}),
      },
    );
  }
  if (body === undefined) {
    throw new CliError(`${request.method} ${url.pathname} answered a body that is not JSON`, "bad_response");
  }
  return body;
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (error.name === "TimeoutError") return "timed out";
    return cause?.code ?? cause?.message ?? error.message;
  }
  return String(error);
}
