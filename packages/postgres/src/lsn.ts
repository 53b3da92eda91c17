/**
 * A PostgreSQL log sequence number (`16/B374D848`) as the unsigned 64-bit integer it writes
 * in hexadecimal halves. Watermarks are commit LSNs, so they keep this integer form.
 */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a log sequence number: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: bigint): string {
  const high = (lsn >> 32n) & 0xffffffffn;
  const low = lsn & 0xffffffffn;
  return `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
}
