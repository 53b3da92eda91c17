/**
 * The namespace a request target names (its first path segment, as host-core routes it), which
 * decides its worker; a target without one goes to the worker of the empty name, which refuses
 * it as host-core does.
 */
export function targetNamespace(url: string | undefined): string {
  if (!url?.startsWith("/")) return "";
  const end = url.indexOf("/", 1);
  const query = url.indexOf("?");
  const stop = end === -1 ? (query === -1 ? url.length : query) : query === -1 ? end : Math.min(end, query);
  return url.slice(1, stop);
}
