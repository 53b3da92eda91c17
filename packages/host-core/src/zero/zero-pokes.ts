import { type QueryPages, QueryPageTurn } from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";
import type { PullFlowResult } from "../flows/pull-flow.js";
import { PutSlice } from "../flows/put-slice.js";
import type { Logger } from "../ports/logger.js";
import type { ZeroConnection } from "./zero-connection.js";
import {
  commonCookie,
  deliver,
  deliverSplit,
  laterCookie,
  replayLastPoke,
  sameCookie,
} from "./zero-delivery.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroGroup } from "./zero-group.js";
import type { ZeroMembers } from "./zero-members.js";
import type { ZeroMeter } from "./zero-meter.js";
import type { ZeroNamespace } from "./zero-namespace.js";
import type { QueryPullAnswer } from "./zero-poke.js";

/**
 * Computes groups' query-aware pulls and sends them as pokes: one group's (with its query changes
 * and store writes), or one pull shared by groups that hold the same state.
 */
export class ZeroPokes {
  constructor(
    private readonly ns: ZeroNamespace,
    private readonly members: ZeroMembers,
    private readonly logger: Logger,
    private readonly meter: ZeroMeter,
    /** How many new queries each poke evaluates (sized from what pokes take). */
    private readonly slice: PutSlice = new PutSlice(),
  ) {}

  /** Groups a poke is scheduled for (pokeLater). */
  private readonly later = new Set<ZeroGroup>();
  /** The pages a group's poke read before it stopped for a turn (QueryPageTurn), for its next. */
  private readonly pages = new WeakMap<ZeroGroup, QueryPages>();

  /**
   * Pokes the group once the event loop has had its turn (one poke, however often asked for
   * before it runs): what a refusal dropped, or the next slice of a flood of puts, never runs in
   * the same turn as the poke before it.
   */
  private pokeLater(group: ZeroGroup): void {
    if (this.later.has(group)) return;
    this.later.add(group);
    setTimeout(() => {
      this.later.delete(group);
      this.poke(group);
    }, 0);
  }

  /** Computes the group's pull and sends it to each of its connections as one poke. */
  poke(group: ZeroGroup): void {
    const connections = this.members.pokeable(group);
    if (connections.length === 0) return;
    // Connections behind the group's cookie get a full answer of their own, unless all are; those
    // that missed only its last poke get that poke again first, and are then at its cookie.
    let lagging =
      group.reset || group.cookie === null
        ? []
        : replayLastPoke(
            group,
            connections.filter((c) => !sameCookie(c.cookie, group.cookie)),
          );
    // All of them behind, at one cookie (a client back after missing pokes): the group goes on
    // from that cookie, and the engine answers what changed since it (or resets, when its log no
    // longer tells).
    const behind = lagging.length === connections.length ? commonCookie(lagging) : null;
    if (behind !== null && !laterCookie(behind, group.cookie!)) {
      group.catchUp(behind);
      lagging = [];
    }
    const full = group.reset || group.cookie === null || lagging.length === connections.length;
    // A poke evaluates a slice of the new queries (PutSlice); the rest go in pokes of their own,
    // each after the event loop had its turn: a flood of puts delays others by one slice, not all
    // of it.
    const patch = group.takeEnginePatch(this.slice.size);
    const started = performance.now();
    if (group.hasPendingPatch()) this.pokeLater(group);
    const changes = group.takeStoreChanges();
    const claims = connections[connections.length - 1]!.claims;
    this.members.subscribe(group, claims);
    let answer: QueryPullAnswer;
    // The answer is a part (rows owed, queries waiting: a cut by the caps or by its time): the
    // group is poked again after the event loop's turn, until it has every row.
    let partial = false;
    // The new queries' roots are read in pages: past the server's queryPageMs the pull stops
    // after its page, rolled back, and the group is poked again after the event loop's turn,
    // going on from the pages read (as a native pull does, runPagedPull).
    const pages = this.pages.get(group) ?? this.ns.queryPages();
    try {
      const pull = () =>
        this.ns.pull(
          "native",
          {
            clientGroupID: group.id,
            clientID: connections[0]!.clientID,
            cookie: full ? null : group.cookie!.version,
            queries: { patch },
          },
          claims,
          undefined,
          pages,
        );
      // What the group keeps is stored with the pull that applies it: a restart finds both or
      // neither. The pull goes first: one refused writes nothing.
      const result =
        changes === null
          ? pull()
          : this.ns.transaction(() => {
              const pulled = pull();
              this.ns.zeroStore.write(group.id, changes);
              return pulled;
            });
      this.pages.delete(group);
      answer = JSON.parse(result.response.body ?? "{}") as QueryPullAnswer;
      partial = result.more === true;
      this.chargeEvaluated(claims, result);
      this.slice.took(
        patch.reduce((puts, op) => puts + (op.op === "put" ? 1 : 0), 0),
        performance.now() - started,
      );
    } catch (error) {
      if (changes !== null) group.restoreStoreChanges(changes);
      if (error instanceof QueryPageTurn || pages.stopped) {
        this.pages.set(group, pages);
        group.restoreEnginePatch(patch);
        this.pokeLater(group);
        return;
      }
      this.pages.delete(group);
      // A query stopped past its work budget did that work: its user's quota pays for it.
      const examined = (error as { rowsExamined?: unknown }).rowsExamined;
      if (typeof examined === "number" && examined > 0) {
        this.meter(claims.userID, { kind: "evaluated", rows: examined });
      }
      const code = (error as { code?: unknown }).code;
      const puts = patch.filter((op) => op.op === "put");
      const named = (error as { query?: unknown }).query;
      // Each refusal below drops the queries it names before poking again, so the pokes end.
      if (code === "query_budget_exceeded" && typeof named === "string") {
        // One query passed its work budget (a put, or one the group holds, re-evaluated): it goes
        // alone, the client hears why, and the rest go on.
        const put = puts.find((op) => op.hash === named);
        for (const connection of connections) {
          connection.send([
            "transformError",
            [{ error: "app", id: named, name: put?.name ?? "", message: (error as Error).message }],
          ]);
        }
        group.restoreEnginePatch(put ? patch : [...patch, { op: "del", hash: named }]);
        group.dropPuts(new Set([named]));
        this.pokeLater(group);
        return;
      }
      if (puts.length > 0 && (code === "bad_request" || code === "query_budget_exceeded")) {
        // A query the server cannot answer fails alone: the client hears why, the rest go on.
        // Puts the group's caps refuse (a budget refusal that names no query) take the puts queued
        // right behind them along, in the same answer: those would only meet the caps again, each
        // slice in a pull of its own.
        group.restoreEnginePatch(patch.filter((op) => op.op !== "put"));
        const capped = code === "query_budget_exceeded" ? group.takeCappedPuts() : [];
        const refused = [...puts, ...capped];
        for (const connection of connections) {
          connection.send([
            "transformError",
            refused.map((op) => ({
              error: "app",
              id: op.hash,
              name: op.name,
              message: (error as Error).message,
            })),
          ]);
        }
        group.dropPuts(new Set(puts.map((op) => op.hash)));
        this.pokeLater(group);
        return;
      }
      group.restoreEnginePatch(patch);
      const refusal =
        code === "forbidden"
          ? new ZeroError("Unauthorized", "the client group belongs to another user")
          : code === "queries_disabled" || code === "shutting_down"
            ? new ZeroError("ServerOverloaded", (error as Error).message)
            : null;
      if (!refusal) this.logger.log("error", { msg: "zero poke failed", error: String(error) });
      for (const connection of connections)
        connection.fail(refusal ?? new ZeroError("Internal", "the server failed; reconnect"));
      return;
    }
    if (partial) this.pokeLater(group);
    if (full || lagging.length === 0) {
      deliver(group, connections, answer, full);
      this.members.noteOwed(group);
      return;
    }
    let whole: QueryPullAnswer;
    try {
      whole = this.pullWhole(group, lagging);
    } catch (error) {
      this.logger.log("error", { msg: "zero poke failed", error: String(error) });
      for (const connection of lagging)
        connection.fail(new ZeroError("Internal", "the server failed; reconnect"));
      deliver(
        group,
        connections.filter((c) => !lagging.includes(c)),
        answer,
        false,
      );
      return;
    }
    deliverSplit(
      group,
      connections.filter((c) => !lagging.includes(c)),
      answer,
      lagging,
      whole,
    );
    this.members.noteOwed(group);
  }

  /**
   * Pokes groups that hold the same state (the same `shareKey`) with one pull: the first group's,
   * which the engine lets the others follow when it finds their state the same as the first's
   * (`PullInput.followers`). A group it does not let follow is poked on its own.
   */
  pokeAlike(groups: readonly ZeroGroup[]): void {
    const [leader, ...rest] = groups as [ZeroGroup, ...ZeroGroup[]];
    const connections = this.members.pokeable(leader);
    let result: PullFlowResult;
    try {
      result = this.ns.pull(
        "native",
        {
          clientGroupID: leader.id,
          clientID: connections[0]!.clientID,
          cookie: leader.cookie!.version,
          queries: { patch: [] },
        },
        connections[connections.length - 1]!.claims,
        rest.map((group) => group.id),
      );
    } catch {
      // Each group's own poke meets the failure again, and answers it as a poke does.
      for (const group of groups) this.poke(group);
      return;
    }
    deliver(leader, connections, JSON.parse(result.response.body ?? "{}") as QueryPullAnswer, false);
    this.chargeEvaluated(connections[connections.length - 1]!.claims, result);
    this.members.noteOwed(leader);
    if (result.more) this.pokeLater(leader);
    const took = new Map((result.followed ?? []).map((f) => [f.clientGroupID, f.body]));
    for (const group of rest) {
      const body = took.get(group.id);
      if (body === undefined) this.poke(group);
      else {
        deliver(group, this.members.pokeable(group), JSON.parse(body) as QueryPullAnswer, false);
        this.members.noteOwed(group);
      }
    }
  }

  /** The group's full answer (every row its queries hold), for connections behind its cookie. */
  private pullWhole(group: ZeroGroup, lagging: readonly ZeroConnection[]): QueryPullAnswer {
    const result = this.ns.pull(
      "native",
      { clientGroupID: group.id, clientID: lagging[0]!.clientID, cookie: null, queries: { patch: [] } },
      lagging[lagging.length - 1]!.claims,
    );
    return JSON.parse(result.response.body ?? "{}") as QueryPullAnswer;
  }

  /** Charges a poke's query evaluations to the user whose claims it ran under. */
  private chargeEvaluated(claims: Claims, result: PullFlowResult): void {
    const rows = result.log.queryRows ?? 0;
    if (rows > 0) this.meter(claims.userID, { kind: "evaluated", rows });
  }
}
