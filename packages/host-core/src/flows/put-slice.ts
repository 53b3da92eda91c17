/** New queries one step (a Zero poke, a step of a sliced pull) evaluates at most. */
export const MAX_PUTS_PER_STEP = 32;

/**
 * How long one step aims to hold the thread, in milliseconds, where no target is given (a
 * namespace gives its `querySliceMs`, to its native pulls' steps and its Zero pokes alike).
 */
const POKE_SLICE_MS = 10;

/**
 * How many new queries a namespace's next step evaluates (a Zero poke, or a step of a native
 * pull's patch: sliced-pull.ts): sized from what the last steps took, so that a step holds the
 * thread about `targetMs` (between 1 and `max` new queries). A flood of puts then goes in steps
 * that each give the thread back soon, however costly the namespace's queries are. Only how
 * the puts are grouped into steps changes, never what the group ends with.
 */
export class PutSlice {
  private current: number;

  constructor(
    private readonly max = MAX_PUTS_PER_STEP,
    private readonly targetMs = POKE_SLICE_MS,
  ) {
    this.current = max;
  }

  /** The new queries the next step may take. */
  get size(): number {
    return this.current;
  }

  /** A step that evaluated `puts` new queries held the thread `ms` milliseconds. */
  took(puts: number, ms: number): void {
    if (puts === 0) return;
    // Proportional: the step that would have taken the target at this step's pace (a clock
    // that does not move while code runs, as on the edge, keeps the largest).
    const fit = ms <= 0 ? this.max : Math.floor((puts * this.targetMs) / ms);
    this.current = Math.min(this.max, Math.max(1, fit));
  }
}
