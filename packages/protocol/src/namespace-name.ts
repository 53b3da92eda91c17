/** A namespace names one database; its name is also a file name in some hosts, hence the tight set. */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function isValidNamespace(name: string): boolean {
  return NAMESPACE_PATTERN.test(name);
}
