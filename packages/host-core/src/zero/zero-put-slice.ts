/** New queries one poke evaluates at most. */
const MAX_PUTS_PER_POKE = 32;

/** How long one poke's evaluations aim to hold the thread, in milliseconds. */
const POKE_SLICE_MS = 10;

/**
 * How many new queries a namespace's next poke evaluates: sized from what the last pokes took,
 * so that a slice holds the thread about POKE_SLICE_MS (between 1 and MAX_PUTS_PER_POKE new
 * queries). A flood of puts then goes in slices that each give the thread back soon, however
 * costly the namespace's queries are. Only how the puts are grouped into pokes changes, never
 * what the group ends with.
 */
export class PutSlice {
  private current: number;

  constructor(
    private readonly max = MAX_PUTS_PER_POKE,
    private readonly targetMs = POKE_SLICE_MS,
  ) {
    this.current = max;
  }

  /** The new queries the next poke may take. */
  get size(): number {
    return this.current;
  }

  /** A poke that evaluated `puts` new queries held the thread `ms` milliseconds. */
  took(puts: number, ms: number): void {
    if (puts === 0) return;
    // Proportional: the slice that would have taken the target at this poke's pace (a clock
    // that does not move while code runs, as on the edge, keeps the largest).
    const fit = ms <= 0 ? this.max : Math.floor((puts * this.targetMs) / ms);
    this.current = Math.min(this.max, Math.max(1, fit));
  }
}
