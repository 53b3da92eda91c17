import type { QueryPatchOperation } from "@weir/protocol";

/**
 * The query patch a Zero group's next pull sends to the engine, in order. Each hash's pending
 * operations are found by hash, not by a scan of the patch: cancelling one costs the same
 * whatever the patch holds, so a frame of a thousand puts and dels is linear.
 */
export class ZeroEnginePatch {
  /** The operations from `head` on, a cancelled one as a hole; the slot of position p is p - base. */
  private ops: Array<QueryPatchOperation | undefined> = [];
  private base = 0;
  private head = 0;
  private live = 0;
  /** The positions of each hash's pending operations since the last clear, oldest first. */
  private readonly byHash = new Map<string, number[]>();

  get length(): number {
    return this.live;
  }

  push(op: QueryPatchOperation): void {
    const position = this.base + this.ops.length;
    this.ops.push(op);
    this.live++;
    if (op.op === "clear") {
      this.byHash.clear();
      return;
    }
    const positions = this.byHash.get(op.hash);
    if (positions) positions.push(position);
    else this.byHash.set(op.hash, [position]);
  }

  /** Drops the newest pending `op` of `hash` since the last clear; answers whether there was one. */
  cancel(op: "put" | "del", hash: string): boolean {
    const positions = this.byHash.get(hash);
    if (!positions) return false;
    for (let i = positions.length - 1; i >= 0; i--) {
      const slot = positions[i]! - this.base;
      if (this.ops[slot]!.op !== op) continue;
      this.ops[slot] = undefined;
      this.live--;
      positions.splice(i, 1);
      if (positions.length === 0) this.byHash.delete(hash);
      return true;
    }
    return false;
  }

  /** Whether a put of `hash` is pending (since the last clear). */
  hasPut(hash: string): boolean {
    for (const position of this.byHash.get(hash) ?? [])
      if (this.ops[position - this.base]?.op === "put") return true;
    return false;
  }

  /** The operations in order. */
  all(): QueryPatchOperation[] {
    const ops: QueryPatchOperation[] = [];
    for (let slot = this.head; slot < this.ops.length; slot++) {
      const op = this.ops[slot];
      if (op) ops.push(op);
    }
    return ops;
  }

  /** Takes the operations up to the `maxPuts`-th put; the rest stay. */
  take(maxPuts: number): QueryPatchOperation[] {
    const taken: QueryPatchOperation[] = [];
    let puts = 0;
    for (; this.head < this.ops.length; this.head++) {
      const op = this.ops[this.head];
      if (!op) continue;
      if (op.op === "put" && ++puts > maxPuts) break;
      taken.push(op);
      this.live--;
      if (op.op !== "clear") this.forget(op.hash, this.base + this.head);
    }
    // The taken slots go once they are half the array, so taking in slices stays linear.
    if (this.head * 2 >= this.ops.length) {
      this.ops = this.ops.slice(this.head);
      this.base += this.head;
      this.head = 0;
    }
    return taken;
  }

  /** The patch becomes these operations (puts back a failed pull's patch, drops refused puts). */
  reset(ops: readonly QueryPatchOperation[]): void {
    this.ops = [];
    this.base = 0;
    this.head = 0;
    this.live = 0;
    this.byHash.clear();
    for (const op of ops) this.push(op);
  }

  /** A taken operation leaves its hash's positions, where it is the oldest (unless a clear came after it). */
  private forget(hash: string, position: number): void {
    const positions = this.byHash.get(hash);
    if (positions?.[0] !== position) return;
    positions.shift();
    if (positions.length === 0) this.byHash.delete(hash);
  }
}
