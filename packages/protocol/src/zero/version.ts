/** Zero's sync protocol versions weir speaks (the `v<N>` of `/sync/v<N>/connect`). */
export const ZERO_PROTOCOL_VERSIONS: readonly number[] = [51];
