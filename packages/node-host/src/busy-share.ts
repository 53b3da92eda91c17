/** The window a worker's time is shared out over (ms). */
const BUSY_WINDOW_MS = 1_000;
/** The share of a window past which a namespace counts as keeping its worker busy. */
const BUSY_SHARE = 0.5;

/**
 * Which namespace of a worker keeps it busy: one whose steps, none of them past the step budget,
 * held the worker more than half of a window (a second) in which another namespace of the worker
 * had a step too. Such a namespace delays the others as one long step would: each of their steps
 * waits behind one of its. A namespace alone on its worker delays no one, and is not counted,
 * except in the overflow worker (`countAlone`): there a count keeps it from moving back while it
 * stays busy (it would move home, delay its neighbours there two seconds, and move again).
 * The windows follow each other (a namespace busy for two seconds counts twice).
 */
export class BusyShare {
  private windowStart = Number.NEGATIVE_INFINITY;
  /** The ms each namespace's steps held the worker in the current window. */
  private readonly held = new Map<string, number>();
  /** The namespaces counted in the current window (each once). */
  private readonly counted = new Set<string>();

  private readonly clock: () => number;
  private readonly countAlone: boolean;

  /** `clock`: the ms clock it times windows by (a test's own); `countAlone`: see above. */
  constructor(options: { clock?: () => number; countAlone?: boolean } = {}) {
    this.clock = options.clock ?? (() => performance.now());
    this.countAlone = options.countAlone ?? false;
  }

  /**
   * A step of `namespace` ended, having held the worker `ms`: answers the ms its steps held the
   * worker in the window when that passed its share just now (once a window), null otherwise.
   */
  step(namespace: string, ms: number): number | null {
    const now = this.clock();
    if (now - this.windowStart >= BUSY_WINDOW_MS) {
      this.windowStart = now;
      this.held.clear();
      this.counted.clear();
    }
    const held = (this.held.get(namespace) ?? 0) + ms;
    this.held.set(namespace, held);
    if (held <= BUSY_WINDOW_MS * BUSY_SHARE || (this.held.size < 2 && !this.countAlone)) return null;
    if (this.counted.has(namespace)) return null;
    this.counted.add(namespace);
    return held;
  }
}
