import type { MutateRequest } from "@weir/protocol";
import { HttpError } from "../http/http-error.js";
import { ingestRefusal } from "../ingest/ingest-flow.js";
import type { Clock } from "../ports/clock.js";
import { callMutate, type MutateOutcome } from "./mutate-call.js";
import type { ResolvedMutate } from "./mutate-config.js";

export interface MutateDelegateInit {
  namespace: string;
  /** The app's mutate endpoint for this namespace. */
  url: string;
  mutate: ResolvedMutate;
  clock: Clock;
  /** Ingest passes that start after the call, until the cursor reaches `watermark`. */
  catchUp(watermark: bigint | undefined, waitMs: number): Promise<void>;
  /** Whether the namespace's first snapshot is still being built (no upstream cursor yet). */
  building(): boolean;
}

/** A namespace's side of delegated push: the call to the app, then the wait for its writes. */
export class MutateDelegate {
  constructor(private readonly init: MutateDelegateInit) {}

  forward(body: MutateRequest, authorization: string | null): Promise<MutateOutcome> {
    const { mutate, clock } = this.init;
    return callMutate({
      url: this.init.url,
      fetch: mutate.fetch ?? ((url, init) => fetch(url, init)),
      body,
      authorization,
      namespace: this.init.namespace,
      // While the first snapshot is still being built, the app's writes take longer to come back.
      timeoutMs: this.init.building() ? mutate.firstSnapshotTimeoutMs : mutate.timeoutMs,
      attempts: mutate.attempts,
      now: () => clock.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
  }

  async ingestEffects(watermark: bigint | undefined): Promise<void> {
    try {
      await this.init.catchUp(watermark, this.init.mutate.effectsWaitMs);
    } catch (error) {
      if ((error as Error).name === "TimeoutError") {
        throw new HttpError(
          "upstream_unavailable",
          `the app's writes did not come back from the upstream: ${(error as Error).message}; nothing was acknowledged, push again`,
        );
      }
      throw ingestRefusal(error, this.init.clock.now());
    }
  }
}
