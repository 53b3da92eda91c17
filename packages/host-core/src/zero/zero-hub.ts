import type { AudienceProbe } from "@weir/engine-wasm";
import type { ZeroPushBody } from "@weir/protocol";
import { EVERYONE, type WakeAudience } from "../audience/wake-audience.js";
import type { Claims } from "../auth/claims.js";
import { PutSlice } from "../flows/put-slice.js";
import type { Logger } from "../ports/logger.js";
import { admitQueries, chargeMessage } from "./zero-admission.js";
import { checkLastMutationID, recoveryPullAnswer } from "./zero-client-record.js";
import type { ZeroConnectRequest } from "./zero-connect-request.js";
import { ZeroConnection, type ZeroConnectionHost } from "./zero-connection.js";
import type { ZeroConnectionState } from "./zero-connection-state.js";
import { formatZeroCookie, parseZeroCookie, type ZeroCookie } from "./zero-cookie.js";
import { laterCookie } from "./zero-delivery.js";
import { ZeroError } from "./zero-error.js";
import { ZeroGroup } from "./zero-group.js";
import { ZeroMembers } from "./zero-members.js";
import type { ZeroMeter } from "./zero-meter.js";
import type { ZeroNamespace } from "./zero-namespace.js";
import { ZeroPokes } from "./zero-pokes.js";
import { runZeroPush } from "./zero-push.js";
import { zeroRefusal } from "./zero-refusal.js";
import type { ZeroSocket } from "./zero-socket.js";

/** How many groups without a connection the hub remembers (so their reconnects need no reset). */
const IDLE_GROUPS = 10_000;

/**
 * A namespace's Zero connections, by client group. After a commit (told by `changed`, coalesced
 * like wake) every group with a connection gets its query-aware pull as one poke; a group's own
 * changes (queries, pushes) poke it at once.
 */
export class ZeroHub {
  private readonly groups = new Map<string, ZeroGroup>();
  private readonly members: ZeroMembers;
  private readonly pokes: ZeroPokes;
  private flushQueued = false;
  /** The namespace's watermark when this hub took its first connection. */
  private firstWatermark: number | null = null;
  /** Groups a commit concerns, gathered until the flow that committed is done. */
  private queued = new Set<ZeroGroup>();
  private queuedEveryone = false;
  private readonly host: ZeroConnectionHost;

  constructor(
    private readonly ns: ZeroNamespace,
    logger: Logger,
    private readonly reauthenticate: (token: string) => Promise<Claims>,
    meter: ZeroMeter = () => {},
    /** How many new queries a poke evaluates (by default sized from what pokes take). */
    slice: PutSlice = new PutSlice(),
  ) {
    this.members = new ZeroMembers(ns);
    this.pokes = new ZeroPokes(ns, this.members, logger, meter, slice);
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
      charge: (connection, cost) => chargeMessage(meter, connection, cost),
      closed: (connection) => this.leave(connection),
    };
  }

  /** How many connections are open. */
  get size(): number {
    return this.members.size;
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
        // client missed answers) it answers what changed since, or resets when its log no longer
        // tells. What else the client missed (queries got and desired, mutation results) is
        // not known: the next answer names all of it again.
        group.catchUp(cookie);
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
    this.members.join(connection);
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
    this.members.join(connection);
    return connection;
  }

  /** The probes the groups' filters need answered about a commit, added to `into`. */
  probes(into: Map<string, AudienceProbe>): Map<string, AudienceProbe> {
    return this.members.probes(into);
  }

  /**
   * Rows changed: each group with a connection that the audience admits (its user wrote, or its
   * visibility admits a changed row's image) is poked, once the current flow is done; a group
   * the commits do not concern costs nothing. Groups that hold the same state (`shareKey`) share
   * one pull: the engine answers the first and moves the others along with it.
   */
  changed(audience: WakeAudience = EVERYONE): void {
    if (this.members.groupCount === 0) return;
    if (audience.everyone) this.queuedEveryone = true;
    else for (const group of this.members.select(audience)) this.queued.add(group);
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      const chosen = this.queuedEveryone ? new Set(this.members.groups()) : this.queued;
      for (const group of this.members.owing) chosen.add(group);
      this.queued = new Set();
      this.queuedEveryone = false;
      const alike = new Map<string, ZeroGroup[]>();
      for (const group of chosen) {
        if (!this.members.has(group)) continue;
        if (group.pushing) continue;
        const key = this.members.shareKey(group);
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
        else this.pokes.pokeAlike(groups);
      }
    });
  }

  /**
   * The namespace is closing: every connection is closed (`fail`), or, when the namespace is only
   * evicted (`detach`), let go of with its socket left open, for the host to restore it when the
   * namespace opens again (ZeroSocket.detached).
   */
  close(mode: "fail" | "detach" = "fail"): void {
    for (const connection of this.members.connections()) {
      if (mode === "detach") connection.detach();
      else connection.fail(new ZeroError("ServerOverloaded", "the server is closing"));
    }
  }

  /** Computes the group's pull and sends it to each of its connections as one poke. */
  poke(group: ZeroGroup): void {
    this.pokes.poke(group);
  }

  /**
   * A group is pulled under the claims of its newest connection: one that changed its claims
   * becomes that, and the group is poked at once, so that its rows follow them (the engine
   * deletes what they hide and puts what they show; nothing, when they filter alike).
   */
  private reauthenticated(connection: ZeroConnection): void {
    this.members.promote(connection);
    this.poke(connection.group);
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

  private leave(connection: ZeroConnection): void {
    if (this.members.leave(connection)) this.queued.delete(connection.group);
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
