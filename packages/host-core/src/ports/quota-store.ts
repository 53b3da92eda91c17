/** Units spent under `key` in the window numbered `window` (time divided by the window's length). */
export interface QuotaSpend {
  key: string;
  window: number;
  units: number;
}

/** A key's spend in its window and in the window before, as every process sharing the store sees it. */
export interface QuotaCount {
  key: string;
  current: number;
  previous: number;
}

/**
 * Where request quotas keep what users spent, so that every process sharing it (and the same one
 * after a restart) counts against the same budgets. `add` adds each spend (units may be 0, to
 * read) and answers the counts after it, in one transaction.
 */
export interface QuotaStore {
  add(spends: readonly QuotaSpend[]): QuotaCount[];
  close?(): void;
}

/** Counts in this process's memory only: for hosts without shared storage. */
export function memoryQuotaStore(): QuotaStore {
  const counts = new Map<string, Map<number, number>>();
  return {
    add(spends) {
      return spends.map(({ key, window, units }) => {
        let windows = counts.get(key);
        if (!windows) {
          windows = new Map();
          counts.set(key, windows);
        }
        const current = (windows.get(window) ?? 0) + units;
        windows.set(window, current);
        for (const old of windows.keys()) if (old < window - 1) windows.delete(old);
        return { key, current, previous: windows.get(window - 1) ?? 0 };
      });
    },
  };
}
