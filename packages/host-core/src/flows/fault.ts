import type { FaultKind, FaultPoint } from "@weir/protocol";
import { HttpError } from "../http/http-error.js";
import type { Knobs } from "./knobs.js";

/** A failure an operator armed at a point of a flow, to see how clients cope. */
export class FaultError extends HttpError {
  readonly point: FaultPoint;

  constructor(point: FaultPoint, kind: FaultKind) {
    super(
      kind === "quota" ? "quota_exceeded" : "fault_injected",
      kind === "quota" ? `storage quota exceeded (injected at ${point})` : `fault injected at ${point}`,
    );
    this.point = point;
  }
}

/** Throws the armed fault of `point`, if any. The caller disarms it once its transaction is over. */
export function fireFault(knobs: Readonly<Knobs>, point: FaultPoint): void {
  const kind = knobs.faults[point];
  if (kind) throw new FaultError(point, kind);
}
