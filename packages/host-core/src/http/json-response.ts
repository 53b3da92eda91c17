import { jsonParts, toResponse } from "./http-parts.js";

/** A JSON Response. A string body is sent as is. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return toResponse(jsonParts(body, status, headers));
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
