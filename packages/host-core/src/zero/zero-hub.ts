import type { AudienceProbe } from "@weir/engine-wasm";
import { AudienceIndex } from "../audience/audience-index.js";
import { EVERYONE, type WakeAudience } from "../audience/wake-audience.js";
import type { Claims } from "../auth/claims.js";
import type { PullFlowResult } from "../flows/pull-flow.js";
import type { Logger } from "../ports/logger.js";
import { admitQueries, chargeMessage } from "./zero-admission.js";
import { checkLastMutationID, recoveryPullAnswer } from "./zero-client-record.js";
import type { ZeroConnectRequest } from "./zero-connect-request.js";
import { ZeroConnection, type ZeroConnectionHost } from "./zero-connection.js";
import type { ZeroConnectionState } from "./zero-connection-state.js";
import { formatZeroCookie, parseZeroCookie, type ZeroCookie } from "./zero-cookie.js";
import { deliver, deliverSplit, laterCookie, replayLastPoke, sameCookie } from "./zero-delivery.js";
import { ZeroError } from "./zero-error.js";
import { ZeroGroup } from "./zero-group.js";
import type { ZeroPushBody } from "./zero-messages.js";
import type { ZeroMeter } from "./zero-meter.js";
import type { ZeroNamespace } from "./zero-namespace.js";
import type { QueryPullAnswer } from "./zero-poke.js";
import { runZeroPush } from "./zero-push.js";
import { zeroRefusal } from "./zero-refusal.js";
import type { ZeroSocket } from "./zero-socket.js";

/** New queries one poke evaluates at most (a flood of puts is applied in slices of this many). */
const PUTS_PER_POKE = 32;

/** How many groups without a connection the hub remembers (so their reconnects need no reset). */
const IDLE_GROUPS = 10_000;

/**
 * A namespace's Zero connections, by client group. After a commit (told by `changed`, coalesced
 * like wake) every group with a connection gets its query-aware pull as one poke; a group's own
 * changes (queries, pushes) poke it at once.
 */
export class ZeroHub {
  private readonly groups = new Map<string, ZeroGroup>();
  private readonly members = new Map<ZeroGroup, Set<ZeroConnection>>();
  private flushQueued = false;
  /** The namespace's watermark when this hub took its first connection. */
  private firstWatermark: number | null = null;
  /** The groups with connections, by what their visibility must be poked for. */
  private readonly audience = new AudienceIndex<ZeroGroup>();
  /** The claims each group's subscription was read from (a new credential may change them). */
  private readonly subscribedAs = new Map<ZeroGroup, Claims>();
  /** Groups a commit concerns, gathered until the flow that committed is done. */
  private queued = new Set<ZeroGroup>();
  private queuedEveryone = false;
  /** Groups whose last poke left rows owed (a cut answer): poked again after any commit. */
  private readonly owing = new Set<ZeroGroup>();
  private readonly host: ZeroConnectionHost;

  constructor(
    private readonly ns: ZeroNamespace,
    logger: Logger,
    private readonly reauthenticate: (token: string) => Promise<Claims>,
    private readonly meter: ZeroMeter = () => {},
  ) {
    this.host = {
      logger,
      checkQueries: (connection, ops) => admitQueries(this.ns.queries, connection, ops),
      poke: (group) => this.poke(group),
      push: (connection, body) => this.push(connection, body),
      recoveryPull: (connection, body) => recoveryPullAnswer(this.ns, body, connection.claims),
      // A refused credential is the client's Unauthorized, not a failure of the server's.
      reauthenticate: async (token) => {
        try {
          return await this.reauthenticate(token);
        } catch (error) {
          throw zeroRefusal(error);
        }
      },
      reauthenticated: (connection) => this.reauthenticated(connection),
      charge: (connection, cost) => chargeMessage(this.meter, connection, cost),
      closed: (connection) => this.leave(connection),
    };
  }

  /** How many connections are open. */
  get size(): number {
    let size = 0;
    for (const set of this.members.values()) size += set.size;
    return size;
  }

  /**
   * A client connects: checks that its group is its user's, then its cookie and last mutation
   * id, joins its group and sends `connected`. A cookie weir did not hand out, or one ahead of
   * the namespace, answers InvalidConnectionRequestBaseCookie (the client drops its copy and
   * starts again).
   */
  connect(request: ZeroConnectRequest, claims: Claims, socket: ZeroSocket): ZeroConnection {
    this.firstWatermark ??= this.ns.watermark();
    let group = this.groups.get(request.clientGroupID);
    // Ownership before anything else: another user learns nothing of the group (not its clients'
    // mutation ids), and a refused connect leaves nothing behind that the owner would trip on. A
    // group this hub does not know is checked against (or recorded in) the namespace's data, so
    // the owner holds across restarts and evictions.
    if (group ? group.userID !== claims.userID : !this.ns.claimGroup(request.clientGroupID, claims.userID)) {
      throw new ZeroError("Unauthorized", "the client group belongs to another user");
    }
    let cookie: ZeroCookie | null = null;
    if (request.baseCookie !== null) {
      cookie = parseZeroCookie(request.baseCookie);
      if (cookie === null || cookie.version > this.ns.watermark() || this.neverHandedOut(cookie, group)) {
        throw new ZeroError(
          "InvalidConnectionRequestBaseCookie",
          `the cookie ${request.baseCookie.slice(0, 64)} is not one this server handed out`,
        );
      }
    }
    checkLastMutationID(this.ns, request);
    if (!group) {
      // After a restart the engine still knows the group's queries, and the namespace which
      // client desires which; the client, which thinks the server knows them, sends only what
      // changed since.
      group = this.rebuilt(request.clientGroupID, claims.userID);
      if (cookie !== null) {
        // And it goes on from the client's cookie: every answer that changed the group's rows
        // took a version of its own, at which the engine stored the group's membership, so when
        // that is the cookie's version the engine's answer is incremental, and otherwise (the
        // client missed an answer) it resets. Which queries the client holds as got is not
        // known: the next answer names every complete one again.
        group.cookie = cookie;
        group.reset = false;
      }
      this.remember(group);
    }
    const connection = new ZeroConnection(
      this.host,
      group,
      {
        clientID: request.clientID,
        clientGroupID: group.id,
        wsid: request.wsid,
        claims,
        authToken: request.authToken,
        cookie: request.baseCookie === null ? null : formatZeroCookie(cookie!),
        initialized: false,
        pokes: 0,
      },
      socket,
    );
    this.join(connection);
    connection.start(request.init?.desiredQueriesPatch ?? null);
    return connection;
  }

  /**
   * Whether the cookie is past every cookie the group was handed: one of a version newer than the
   * namespace was when this hub took its first connection came from this hub, so it is at most
   * the group's last poke's. An older one may come from before (a restart), where steps are not
   * known.
   */
  private neverHandedOut(cookie: ZeroCookie, group: ZeroGroup | undefined): boolean {
    if (!group?.cookie || cookie.version <= this.firstWatermark!) return false;
    return laterCookie(cookie, group.cookie);
  }

  /**
   * Restores a connection whose socket outlived the process that opened it (a hibernating
   * Durable Object wakes as a new instance with the sockets still open), from the state its
   * socket last saved. It sends nothing: the client is at the saved cookie, so the group's next
   * poke starts from it, incremental as if the process had never gone. A group new to this hub is
   * rebuilt from the engine's stored queries.
   */
  restore(state: ZeroConnectionState, socket: ZeroSocket): ZeroConnection {
    this.firstWatermark ??= this.ns.watermark();
    const cookie = state.cookie === null ? null : parseZeroCookie(state.cookie);
    if (cookie !== null && cookie.version > this.ns.watermark()) {
      throw new ZeroError("InvalidConnectionRequestBaseCookie", "the namespace is behind this connection");
    }
    let group = this.groups.get(state.clientGroupID);
    if (group && group.userID !== state.claims.userID) {
      throw new ZeroError("Unauthorized", "the client group belongs to another user");
    }
    if (!group) {
      group = this.rebuilt(state.clientGroupID, state.claims.userID);
      // Which queries the client holds as got is not saved: the next answer names every
      // complete one again (a put of a query the client holds as got changes nothing, while
      // taking an incomplete one for got would never tell the client when it completes).
      group.cookie = cookie;
      group.reset = false;
      this.remember(group);
    } else if (cookie !== null && (group.cookie === null || laterCookie(cookie, group.cookie))) {
      group.cookie = cookie;
    }
    const connection = new ZeroConnection(this.host, group, state, socket);
    this.join(connection);
    return connection;
  }

  /** The probes the groups' filters need answered about a commit, added to `into`. */
  probes(into: Map<string, AudienceProbe>): Map<string, AudienceProbe> {
    return this.audience.probes(into);
  }

  /**
   * Rows changed: each group with a connection that the audience admits (its user wrote, or its
   * visibility admits a changed row's image) is poked, once the current flow is done; a group
   * the commits do not concern costs nothing. Groups that hold the same state (`shareKey`) share
   * one pull: the engine answers the first and moves the others along with it.
   */
  changed(audience: WakeAudience = EVERYONE): void {
    if (this.members.size === 0) return;
    if (audience.everyone) this.queuedEveryone = true;
    else for (const group of this.audience.select(audience)) this.queued.add(group);
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      const chosen = this.queuedEveryone ? new Set(this.members.keys()) : this.queued;
      for (const group of this.owing) chosen.add(group);
      this.queued = new Set();
      this.queuedEveryone = false;
      const alike = new Map<string, ZeroGroup[]>();
      for (const group of chosen) {
        if (!this.members.has(group)) continue;
        if (group.pushing) continue;
        const key = this.shareKey(group);
        if (key === null) {
          this.poke(group);
          continue;
        }
        const groups = alike.get(key);
        if (groups) groups.push(group);
        else alike.set(key, [group]);
      }
      for (const groups of alike.values()) {
        if (groups.length === 1) this.poke(groups[0]!);
        else this.pokeAlike(groups);
      }
    });
  }

  /**
   * The namespace is closing: every connection is closed (`fail`), or, when the namespace is only
   * evicted (`detach`), let go of with its socket left open, for the host to restore it when the
   * namespace opens again (ZeroSocket.detached).
   */
  close(mode: "fail" | "detach" = "fail"): void {
    for (const set of [...this.members.values()]) {
      for (const connection of [...set]) {
        if (mode === "detach") connection.detach();
        else connection.fail(new ZeroError("ServerOverloaded", "the server is closing"));
      }
    }
  }

  /** Computes the group's pull and sends it to each of its connections as one poke. */
  poke(group: ZeroGroup): void {
    const connections = this.pokeable(group);
    if (connections.length === 0) return;
    // Connections behind the group's cookie get a full answer of their own, unless all are; those
    // that missed only its last poke get that poke again first, and are then at its cookie.
    const lagging =
      group.reset || group.cookie === null
        ? []
        : replayLastPoke(
            group,
            connections.filter((c) => !sameCookie(c.cookie, group.cookie)),
          );
    const full = group.reset || group.cookie === null || lagging.length === connections.length;
    // A poke evaluates at most PUTS_PER_POKE new queries; the rest go in pokes of their own, each
    // after the event loop had its turn: a flood of puts delays others by one slice, not all of it.
    const patch = group.takeEnginePatch(PUTS_PER_POKE);
    if (group.hasPendingPatch()) setTimeout(() => this.poke(group), 0);
    const changes = group.takeStoreChanges();
    const claims = connections[connections.length - 1]!.claims;
    this.subscribe(group, claims);
    let answer: QueryPullAnswer;
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
        );
      // What the group keeps is stored with the pull that applies it: a restart finds both or
      // neither.
      const result =
        changes === null
          ? pull()
          : this.ns.transaction(() => {
              this.ns.zeroStore.write(group.id, changes);
              return pull();
            });
      answer = JSON.parse(result.response.body ?? "{}") as QueryPullAnswer;
      this.chargeEvaluated(claims, result);
    } catch (error) {
      if (changes !== null) group.restoreStoreChanges(changes);
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
        this.poke(group);
        return;
      }
      if (puts.length > 0 && (code === "bad_request" || code === "query_budget_exceeded")) {
        // A query the server cannot answer fails alone: the client hears why, the rest go on.
        const refused = new Set(puts.map((op) => op.hash));
        for (const connection of connections) {
          connection.send([
            "transformError",
            puts.map((op) => ({
              error: "app",
              id: op.hash,
              name: op.name,
              message: (error as Error).message,
            })),
          ]);
        }
        group.restoreEnginePatch(patch.filter((op) => op.op !== "put"));
        group.dropPuts(refused);
        this.poke(group);
        return;
      }
      group.restoreEnginePatch(patch);
      const refusal =
        code === "forbidden"
          ? new ZeroError("Unauthorized", "the client group belongs to another user")
          : code === "queries_disabled" || code === "shutting_down"
            ? new ZeroError("ServerOverloaded", (error as Error).message)
            : null;
      if (!refusal) this.host.logger.log("error", { msg: "zero poke failed", error: String(error) });
      for (const connection of connections)
        connection.fail(refusal ?? new ZeroError("Internal", "the server failed; reconnect"));
      return;
    }
    if (full || lagging.length === 0) {
      deliver(group, connections, answer, full);
      this.noteOwed(group);
      return;
    }
    let whole: QueryPullAnswer;
    try {
      whole = this.pullWhole(group, lagging);
    } catch (error) {
      this.host.logger.log("error", { msg: "zero poke failed", error: String(error) });
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
    this.noteOwed(group);
  }

  /** Whether the group's queries are all complete; if not, rows are owed to it. */
  private noteOwed(group: ZeroGroup): void {
    if (group.activeHashes().every((hash) => group.got.has(hash))) this.owing.delete(group);
    else this.owing.add(group);
  }

  /** Indexes the group by the claims its pokes are pulled with (those of its newest connection). */
  private subscribe(group: ZeroGroup, claims: Claims): void {
    if (this.subscribedAs.get(group) === claims) return;
    this.subscribedAs.set(group, claims);
    this.audience.add(group, this.ns.subscriptionFor(claims));
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

  /**
   * Pokes groups that hold the same state (the same `shareKey`) with one pull: the first group's,
   * which the engine lets the others follow when it finds their state the same as the first's
   * (`PullInput.followers`). A group it does not let follow is poked on its own.
   */
  private pokeAlike(groups: readonly ZeroGroup[]): void {
    const [leader, ...rest] = groups as [ZeroGroup, ...ZeroGroup[]];
    const connections = this.pokeable(leader);
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
    this.noteOwed(leader);
    const took = new Map((result.followed ?? []).map((f) => [f.clientGroupID, f.body]));
    for (const group of rest) {
      const body = took.get(group.id);
      if (body === undefined) this.poke(group);
      else {
        deliver(group, this.pokeable(group), JSON.parse(body) as QueryPullAnswer, false);
        this.noteOwed(group);
      }
    }
  }

  /** Charges a poke's query evaluations to the user whose claims it ran under. */
  private chargeEvaluated(claims: Claims, result: PullFlowResult): void {
    const rows = result.log.queryRows ?? 0;
    if (rows > 0) this.meter(claims.userID, { kind: "evaluated", rows });
  }

  /**
   * A group is pulled under the claims of its newest connection: one that changed its claims
   * becomes that, and the group is poked at once, so that its rows follow them (the engine
   * deletes what they hide and puts what they show; nothing, when they filter alike).
   */
  private reauthenticated(connection: ZeroConnection): void {
    const set = this.members.get(connection.group);
    if (set?.delete(connection)) set.add(connection);
    this.poke(connection.group);
  }

  /** The group's connections a poke goes to: open, and past their first message. */
  private pokeable(group: ZeroGroup): ZeroConnection[] {
    return [...(this.members.get(group) ?? [])].filter((c) => c.isOpen && c.initialized);
  }

  /**
   * What groups share when their pulls would answer alike: the same user and claims, the same
   * cookie at every connection, the same active queries, and nothing of their own to send the
   * engine or the store (a query change, a pending store write, a reset). Null: the group pulls
   * alone. The engine checks the state itself; this only finds the groups worth asking about.
   */
  private shareKey(group: ZeroGroup): string | null {
    const connections = this.pokeable(group);
    if (connections.length === 0 || group.reset || group.cookie === null || !group.settled()) return null;
    if (connections.some((c) => !sameCookie(c.cookie, group.cookie))) return null;
    const claims = connections[connections.length - 1]!.claims;
    return JSON.stringify([group.userID, group.cookie.version, claims, group.activeHashes()]);
  }

  private async push(connection: ZeroConnection, body: ZeroPushBody): Promise<void> {
    const group = connection.group;
    group.pushing = true;
    // A push (a delegated one waits on the app) holds the namespace open; an idle socket does not.
    this.ns.enter();
    try {
      // Stored with their ids by the push, before any poke carries them.
      const refused = await runZeroPush(this.ns, group, body, connection.claims, connection.authorization);
      for (const result of refused) group.refused(result);
    } finally {
      group.pushing = false;
      this.ns.leave();
    }
    // The pusher's group hears its results now, with the ids they settle.
    this.poke(group);
  }

  private join(connection: ZeroConnection): void {
    let members = this.members.get(connection.group);
    if (!members) {
      members = new Set();
      this.members.set(connection.group, members);
    }
    members.add(connection);
    this.subscribe(connection.group, connection.claims);
  }

  private leave(connection: ZeroConnection): void {
    const members = this.members.get(connection.group);
    if (!members?.delete(connection)) return;
    if (members.size > 0) return;
    this.members.delete(connection.group);
    this.audience.remove(connection.group);
    this.subscribedAs.delete(connection.group);
    this.owing.delete(connection.group);
    this.queued.delete(connection.group);
  }

  /** A group new to this hub, as the namespace stored it (ZeroGroupStore). */
  private rebuilt(clientGroupID: string, userID: string): ZeroGroup {
    const group = new ZeroGroup(clientGroupID, userID);
    group.restore(
      this.ns.storedQueries(clientGroupID),
      this.ns.zeroStore.readDesired(clientGroupID),
      this.ns.zeroStore.readResults(clientGroupID),
    );
    return group;
  }

  private remember(group: ZeroGroup): void {
    this.groups.set(group.id, group);
    if (this.groups.size <= IDLE_GROUPS) return;
    for (const [id, known] of this.groups) {
      if (this.groups.size <= IDLE_GROUPS) break;
      if (!this.members.has(known)) this.groups.delete(id);
    }
  }
}
