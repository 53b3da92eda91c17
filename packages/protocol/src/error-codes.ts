/**
 * Codes of the `{ error, message }` body that every failed request answers with,
 * and the HTTP status each one travels with.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unsupported_version: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  cookie_from_future: 409,
  conflict: 409,
  schema_mismatch: 409,
  schema_drift: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  writer_disabled: 503,
  namespace_busy: 503,
  upstream_unavailable: 503,
  ingest_paused: 503,
  app_unavailable: 503,
  mutate_failed: 502,
  fault_injected: 500,
  quota_exceeded: 507,
  namespace_unavailable: 503,
  rate_limited: 429,
  namespace_quota: 429,
  server_busy: 503,
  shutting_down: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;
