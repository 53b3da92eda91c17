const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/** A JSON answer. A string body is sent as is (the engine renders pull bodies itself). */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Response(text, { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** The `{ error, message }` shape every failed request answers with. */
export function errorResponse(
  status: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse({ error, message }, status, headers);
}
