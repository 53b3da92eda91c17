import type { ChangeAudience, Engine } from "@weir/engine-wasm";
import { EVERYONE, type WakeAudience } from "../audience/wake-audience.js";
import type { Counters } from "../flows/counters.js";
import type { Logger } from "../ports/logger.js";
import type { NamespaceStore } from "../ports/storage.js";
import type { Wake } from "../ports/wake.js";
import type { ZeroHub } from "../zero/zero-hub.js";
import type { WakeRound } from "./wake-coalescer.js";

export interface WakeRouterInit {
  namespace: string;
  /** The namespace as it appears in logs. */
  hash: string;
  engine: Engine;
  store: NamespaceStore;
  wake: Wake;
  zero: ZeroHub;
  logger: Logger;
  counters: Counters;
  /** Whether rows are filtered by visibility now (the config has it and the knob is on). */
  filtering(): boolean;
  /** Nothing is installed in the namespace's database yet. */
  pristine?: boolean;
}

/**
 * Sends wake rounds: to the wake sockets and Zero groups the commits since the last round
 * concern. The engine reads the span's changes once and answers the probes of every listener's
 * filters (`changeAudience`); the indexes then pick the listeners out by what it found, so a
 * round costs what the commits changed and whom they concern, not how many listen.
 */
export class WakeRouter {
  /** The version up to which commits were routed to the sockets they concern. */
  private routed: number;

  constructor(private readonly init: WakeRouterInit) {
    // A namespace not installed yet starts at version 0, where its install leaves it.
    this.routed = init.pristine ? 0 : init.engine.state(init.store.db).watermark;
  }

  route(round: WakeRound): void {
    const { engine, store, wake, namespace, logger, zero } = this.init;
    let audience: WakeAudience;
    const everyone = round.everyone || !this.init.filtering();
    const probes = everyone ? new Map() : zero.probes(new Map(wake.probes(namespace)));
    let found: ChangeAudience;
    try {
      found = engine.changeAudience(store.db, this.routed, [...probes.values()]);
    } catch (error) {
      // A filter the probes could not evaluate on their own (it names what only its table
      // has): this round wakes everyone, and the next starts from the watermark.
      logger.log("error", { msg: "wake routing failed", ns: this.init.hash, error: String(error) });
      this.routed = engine.state(store.db).watermark;
      found = { everyone: true, tables: new Set(), answers: [], through: this.routed };
    }
    this.routed = found.through;
    if (everyone) {
      audience = EVERYONE;
    } else {
      const ids = [...probes.keys()];
      const keys = new Map<string, ReadonlySet<string>>();
      const passed = new Set<string>();
      found.answers.forEach((answer, index) => {
        if (answer === true) passed.add(ids[index]!);
        else if (answer !== false && answer.size > 0) keys.set(ids[index]!, answer);
      });
      audience = found.everyone
        ? EVERYONE
        : { everyone: false, tables: found.tables, keys, passed, users: round.users };
    }
    this.init.counters.wakeFrames += wake.send(namespace, audience, round.except);
    zero.changed(audience);
  }
}
