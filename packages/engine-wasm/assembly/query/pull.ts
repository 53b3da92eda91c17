// A query-aware pull: the group's rows are those its active queries hold. The pull applies the
// group's query patch, re-evaluates the queries the changes since its cookie can affect (see
// affected.ts), and answers the rows whose membership moved, and the
// rows still held that changed since the cookie, with their current values. A client whose
// membership is not at its cookie (a null cookie, one below the floor, one the group's stored
// membership was not answered at and its journal cannot bring up to date: journal.ts) gets
// `clear` and every row its queries hold. Those rows are owed to the client (pending.ts) and an
// answer sends them up to the pull caps.
import { COLUMN_SEPARATOR, NULL_COOKIE, QUERY_OP_VERSION, ROW_SEPARATOR } from "../../src/abi";
import { ChangeScope, keyReads } from "../change-keys";
import { exec, queryRows } from "../host";
import { noteQuietVersion } from "../retention";
import { Schema } from "../schema";
import { commitVersion, readVersions } from "../state";
import { extraParam, jsonString, params } from "../text";
import { Visibility } from "../visibility";
import { completeQueries, idsSince, notePartial } from "./answer-parts";
import { applyPatch } from "./apply-patch";
import { collectDead, rekey } from "./dead-keys";
import { countDeferred, defer, deferredQueries, undefer, undeferAll } from "./deferred";
import {
  Changes,
  catchUp,
  deferOutOfTime,
  evaluateFresh,
  holdsFew,
  readAfresh,
  readInParts,
  refresh,
} from "./evaluations";
import { follow } from "./follow";
import { journalCovers, noteMoves, oweMissed, stampMoves } from "./journal";
import { AnswerPace, namesCompleteQueries } from "./limits";
import { groupKey, Membership } from "./membership";
import { Drops } from "./patch-drops";
import {
  holdsMoreThan,
  oweAll,
  oweChanges,
  rowsAtOnce,
  Sent,
  sendChanges,
  sendHeld,
  sendOwed,
} from "./pending";
import { readPlan } from "./plan";
import { forgetSent, NO_RESUME, resumeOwed } from "./resume";
import { StoredQuery, storedQueries } from "./stored";

/** A stored cookie no client holds (-1 is the null cookie, -2 "never pulled with queries"). */
const NO_CLIENT_COOKIE: i64 = -3;

export class QueryAnswer {
  reset: bool = false;
  included: i64 = 0;
  /** The answer's cookie: the watermark, or a new version when rows are still owed. */
  cookie: i64 = 0;
  /** Rows are still owed: the answer was cut by a cap, and the client pulls again. */
  more: bool = false;
  /** The version after which the answer reports moved last mutation ids (none when `more`). */
  idsSince: i64 = 0;
  patch: string = "";
  gotQueries: string = "[]";
  evaluated: i64 = 0;
  recomputed: i64 = 0;
  /** Of those, the ones whose rows another group lent (lend.ts). */
  copied: i64 = 0;
  /** The evaluations passed the pull's budget of rows: the pull is refused (and rolled back). */
  exceeded: bool = false;
  /** The patch passed a cap of the group's queries (why; "" when it did not): refused too. */
  refused: string = "";
  /** The followers that took this answer: a JSON array of [groupID, ids] ("" when none). */
  followed: string = "";
}

/**
 * Runs the query side of a pull for `groupID`; `storedCookie` is the cookie its membership is
 * at (-2: none); `owed`: rows are owed to it (an earlier answer was cut); `resumeCookie`: the
 * cookie a client that lost its last answer pulls from (-2: none, resume.ts); `visibilityParam`:
 * the identity of `visibility` as a JSON parameter ("null": none, and no rows are lent).
 * Leaves the rows to send with the host (queryPayload) and answers what the body needs.
 */
export function queryPull(
  schema: Schema,
  groupID: string,
  cookie: i64,
  watermark: i64,
  floor: i64,
  storedCookie: i64,
  owed: bool,
  resumeCookie: i64,
  format: i32,
  visibility: Visibility,
  patchText: string,
  maxQueryRows: i64,
  maxRows: i64,
  maxBytes: i64,
  userID: string = "",
  followersParam: string = "",
  visibilityParam: string = "null",
  claimsMoved: bool = false,
  claimsParam: string = "null",
): QueryAnswer {
  const group = jsonString(groupID);
  let key = groupKey(group);
  const answer = new QueryAnswer();
  // Some rows of the keys resets let go of (dead-keys.ts).
  collectDead();
  // A client that lost the group's last answer, which sent owed rows, resumes where the answer
  // before it ended (resume.ts): the lost rows are owed again, and the group's membership
  // is brought up to date from the cookie it is stored at.
  const resumed =
    resumeCookie != NO_RESUME &&
    cookie == resumeCookie &&
    cookie != storedCookie &&
    cookie != NULL_COOKIE &&
    storedCookie >= floor;
  if (resumeCookie != NO_RESUME) {
    if (resumed) resumeOwed(group, key);
    forgetSent(key);
  }
  // A client behind the group's last answers (it missed them) catches up from its cookie: the
  // rows whose holding moved since it are owed again (journal.ts), with the held rows
  // changed since it, and the membership is brought up to date from its stored cookie.
  const caughtUp =
    !resumed &&
    !owed &&
    cookie != NULL_COOKIE &&
    cookie >= floor &&
    cookie < storedCookie &&
    journalCovers(key, cookie);
  const owing = owed || resumed || caughtUp;
  // The cookie the membership moves on from.
  const base = resumed || caughtUp ? storedCookie : cookie;
  const full = cookie == NULL_COOKIE || cookie < floor || (storedCookie != cookie && !resumed && !caughtUp);
  // A reset of a group that held rows builds them under a new key: the old key's rows are
  // deleted by the pulls after it, a few thousand each, not all in this one (dead-keys.ts).
  const rekeyed = full && storedCookie != NO_MEMBERSHIP;
  if (rekeyed) key = rekey(group, key);
  const membership = new Membership(schema, visibility, group, key, watermark, floor, visibilityParam);
  membership.budget = maxQueryRows;
  // The changes the pull reads: where the visibility filter narrows, only those its keys hold for
  // the caller (change-keys.ts), as the rows of every table a query reads pass that filter. A
  // row no state of which since the cookie the caller may see is in no result at either end, and
  // no held row, so its changes move nothing; one of its changes holds each state it may see. A
  // reset keys the filter's columns, so that the pulls after it read by them.
  const reads = keyReads(schema, visibility, watermark);
  const scope = new ChangeScope(visibility, reads, schema.tables, min<i64>(cookie, base));
  membership.lending.readBy(visibility, reads);
  // The group's queries as the answer ends, when read on the way (to name the complete ones).
  let known: Array<StoredQuery> | null = null;
  // Queries still deferred when the answer ends (deferred.ts): the answer is then a part.
  let deferredLeft = 0;
  if (full) {
    // Every held row is answered: the group's rows are built anew from its queries.
    membership.full = true;
    if (!rekeyed) membership.clearRows();
    undeferAll(group);
    answer.refused = applyPatch(schema, membership, group, patchText, false);
    if (answer.refused.length > 0) return answer;
    const queries = storedQueries(group);
    known = queries;
    if (queries.length > 0 && membership.copyAll(queries)) {
      answer.recomputed += queries.length;
    } else {
      // Once the next query, at the last one's pace, would end past the answer's time, the rest
      // wait for the next pulls (deferred.ts).
      const pace = new AnswerPace();
      let fits = true;
      for (let q = 0; q < queries.length && !membership.exceeded(); q++) {
        if (!fits) {
          defer(group, queries[q].hash);
          deferredLeft++;
          continue;
        }
        const query = queries[q];
        if (!evaluateFresh(membership, group, query, readPlan(query.plan, schema), pace)) deferredLeft++;
        answer.recomputed++;
        fits = pace.fits;
      }
    }
  } else {
    // Deferred queries: only a group owed a part of its answer can have them (deferred.ts).
    const waiting = owed ? deferredQueries(group) : new Array<StoredQuery>(0);
    // The pull's evaluations, one after another: past the answer's time, re-evaluations and new
    // queries are deferred (releaseChanged, deferOutOfTime, applyPatch).
    const pace = new AnswerPace();
    if (claimsMoved) {
      // The group's rows were filtered under other claims: every query is evaluated whole under
      // these and diffed against what the group holds, so the rows the claims now hide are
      // deleted and those they now show are put (with the changes since the cookie, as always).
      // Past the answer's time the rest let go of their rows and wait (deferOutOfTime), the
      // deferred ones among them staying so. A query read in ranges is read in them again
      // (readAfresh), however few its rows: whole, it could pass its step's budget.
      const queries = storedQueries(group);
      if (!changesQueries(patchText)) known = queries;
      for (let q = 0; q < queries.length && !membership.exceeded(); q++) {
        const plan = readPlan(queries[q].plan, schema);
        if (readInParts(plan)) {
          if (readAfresh(membership, group, queries[q], plan, pace)) {
            undefer(group, queries[q].hash);
            answer.recomputed++;
          }
          continue;
        }
        if (!pace.fits && holdsFew(key, queries[q].hash)) {
          deferOutOfTime(membership, group, queries[q].hash);
          continue;
        }
        pace.start();
        membership.evaluate(queries[q].hash, queries[q].plan);
        undefer(group, queries[q].hash);
        answer.recomputed++;
        pace.another();
      }
    } else {
      const changes = base < watermark ? new Changes(base, watermark, scope) : null;
      // The queries the patch deletes are not evaluated first: a client can always delete one
      // whose evaluation would refuse its pulls.
      const drops = new Drops(patchText);
      if (changes != null) catchUp(schema, membership, group, waiting, changes, scope, drops);
      // Deferred queries take the pull's first turns, the longest waiting first, at least one a
      // pull: writes between every pull, each affecting a query evaluated before them, would
      // otherwise leave them waiting for as long as the writes go on.
      let done = 0;
      for (; done < waiting.length && !membership.exceeded(); done++) {
        if (!pace.fits && pace.steps > 0) break;
        const query = waiting[done];
        if (drops.has(query.hash)) continue;
        if (query.keeps && !query.range.started()) {
          pace.start();
          membership.evaluate(query.hash, query.plan);
          pace.another();
        } else if (!evaluateFresh(membership, group, query, readPlan(query.plan, schema), pace)) break;
        undefer(group, query.hash);
        answer.recomputed++;
      }
      if (changes != null) {
        const queries = storedQueries(group);
        if (!changesQueries(patchText)) known = queries;
        answer.recomputed += refresh(
          schema,
          membership,
          group,
          key,
          queries,
          changes,
          scope,
          waiting,
          done,
          pace,
          drops,
        );
      }
    }
    answer.refused = applyPatch(schema, membership, group, patchText, true, pace);
    if (answer.refused.length > 0) return answer;
    // Only a pull that had queries waiting or ran past its time can leave some waiting.
    if (waiting.length > 0 || !pace.fits || membership.readAgain) deferredLeft = countDeferred(group);
    membership.settle();
    // An answer that continues a part, or is one, starts the journal again (journal.ts): no
    // move of it need be noted.
    if (membership.moved && !owed && !resumed && deferredLeft == 0) noteMoves(key);
  }
  if (membership.exceeded()) {
    answer.exceeded = true;
    return answer;
  }
  let sent: Sent;
  // The answer sends owed rows, which it keeps for a client that loses it.
  let kept = false;
  if (full) {
    // Every held row is owed, and usually they all fit: then they are sent straight from the
    // group's rows and nothing is owed. Where the call is metered, only as many as one statement
    // renders in a few ms: more are owed and rendered a page at a time (pending.ts).
    if (owed) exec("DELETE FROM _weir_query_pending WHERE group_key = ?", params([key]));
    // A query read in ranges went through the scratch table (membership.ts).
    if (membership.scratched) exec("DELETE FROM _weir_query_scratch");
    const count = holdsMoreThan(key, rowsAtOnce(maxRows))
      ? -1
      : sendHeld(schema, format, key, maxRows, maxBytes);
    if (count >= 0) {
      sent = new Sent();
      sent.included = count;
    } else {
      oweAll(key);
      sent = sendOwed(schema, format, key, maxRows, maxBytes);
    }
  } else {
    // Likewise the rows the pull moved, unless rows were owed before.
    const count = owing
      ? -1
      : sendChanges(schema, format, key, cookie, watermark, rowsAtOnce(maxRows), maxBytes, scope);
    if (count >= 0) {
      sent = new Sent();
      sent.included = count;
      // A whole answer to a group that changed no query: the followers that hold the same state
      // take it too (follow.ts), from the moved rows still in the scratch table.
      if (
        followersParam.length > 0 &&
        !owing &&
        deferredLeft == 0 &&
        cookie < watermark &&
        !changesQueries(patchText)
      ) {
        answer.followed = follow(
          group,
          key,
          userID,
          cookie,
          watermark,
          followersParam,
          membership.moved,
          visibilityParam,
          claimsParam,
        );
      }
      if (membership.scratched || answer.followed.length > 0) exec("DELETE FROM _weir_query_scratch");
    } else {
      if (caughtUp) oweMissed(key, cookie);
      oweChanges(key, caughtUp ? cookie : base, watermark, scope);
      if (membership.scratched) exec("DELETE FROM _weir_query_scratch");
      sent = sendOwed(schema, format, key, maxRows, maxBytes, true);
      kept = true;
    }
  }
  // The answer is a part while rows are owed or queries wait (deferred.ts).
  const partial = sent.more || deferredLeft > 0;
  answer.included = sent.included;
  answer.more = partial;
  answer.reset = full;
  answer.evaluated = membership.evaluated;
  answer.copied = membership.copied;
  answer.gotQueries = !namesCompleteQueries()
    ? "[]"
    : !partial && known != null
      ? hashArray(known!)
      : completeQueries(group, key, partial);
  const since = owing ? idsSince(group, cookie, full, NULL_COOKIE) : full ? NULL_COOKIE : cookie;
  answer.idsSince = since;
  if (owing || partial) notePartial(group, partial, since);
  // An answer that leaves rows owed needs a cookie of its own, which the client echoes to ask
  // for the rest: a new, empty version. So does one that would carry the cookie it was asked
  // with (the group is caught up, and changed its queries or is sent the rest of a cut answer).
  // Then a client that lost the answer pulls from a cookie that is not the one the group's
  // membership is stored at: a lost answer is never taken for a caught-up one. It resumes when
  // the lost answer sent owed rows, and gets a reset otherwise.
  answer.cookie = partial || cookie == watermark ? newVersion() : watermark;
  // A version that committed changes left pending would skip them at the new cookie: the group's
  // membership is then stored at no cookie a client holds, so its next pull resets instead.
  const stored: i64 = answer.cookie < 0 ? NO_CLIENT_COOKIE : answer.cookie;
  if (answer.cookie < 0) answer.cookie = readVersions().watermark;
  // The group's rows were all built under this pull's visibility after a reset or a diff of
  // every query; otherwise only when they were before it too.
  // A client that loses an answer that sent owed rows resumes from the cookie it asked with,
  // unless the membership is stored at no cookie a client holds (then it resets).
  const resumeFrom = kept && stored != NO_CLIENT_COOKIE ? cookie.toString() : "null";
  exec(
    "INSERT INTO _weir_query_groups (group_id, cookie, visibility, resume_cookie, resume_since) VALUES " +
      "(?, ?, ?, ?, ?) ON CONFLICT (group_id) DO UPDATE SET cookie = excluded.cookie, resume_cookie = " +
      "excluded.resume_cookie, resume_since = excluded.resume_since, visibility = CASE WHEN ? OR visibility = " +
      "excluded.visibility THEN excluded.visibility END",
    params([
      group,
      stored.toString(),
      visibilityParam,
      resumeFrom,
      since.toString(),
      full || claimsMoved ? "1" : "0",
    ]),
  );
  // Clients behind this answer catch up through the journal, unless it holds only a part of
  // what a client received (a reset, a cut answer or one continuing one).
  stampMoves(key, stored, full || partial || owed || resumed);
  const version = transformVersion(patchText);
  if (version.length > 0) {
    exec("UPDATE _weir_query_groups SET transform_version = ? WHERE group_id = ?", params([version, group]));
  }
  return answer;
}

/** The stored cookie of a group that never pulled with queries (it holds no rows). */
const NO_MEMBERSHIP: i64 = -2;

/** Whether a query patch changes the group's queries (a transform version alone does not). */
function changesQueries(patchText: string): bool {
  if (patchText.length == 0) return false;
  return !(patchText.startsWith(QUERY_OP_VERSION + COLUMN_SEPARATOR) && !patchText.includes(ROW_SEPARATOR));
}

/** The queries' hashes as a JSON array, in hash order (as `completeQueries` answers them). */
function hashArray(queries: Array<StoredQuery>): string {
  const hashes: string[] = [];
  for (let i = 0; i < queries.length; i++) hashes.push(queries[i].hash);
  return "[" + hashes.join(",") + "]";
}

/**
 * Commits an empty version and answers it; -1 when the log has changes no marker committed yet
 * (the marker commits them too, then).
 */
function newVersion(): i64 {
  const pending = queryRows("SELECT tbl <> '' FROM _weir_changes ORDER BY seq DESC LIMIT 1");
  const clean = pending.length == 0 || pending[0][0] == "0";
  commitVersion();
  if (!clean) return -1;
  const version = readVersions().watermark;
  noteQuietVersion(version);
  return version;
}

/** The patch's "version\t<extra>" line, as a parameter ("" when it has none). */
function transformVersion(patchText: string): string {
  if (!patchText.startsWith(QUERY_OP_VERSION + COLUMN_SEPARATOR)) return "";
  const end = patchText.indexOf(ROW_SEPARATOR);
  const field = patchText.substring(QUERY_OP_VERSION.length + 1, end < 0 ? patchText.length : end);
  return extraParam(I32.parseInt(field, 10));
}

/** The group's stored queries and transform version, as JSON: {"version":..,"queries":[{hash,name,args}]}. */
export function groupQueries(groupID: string): string {
  return queryRows(
    "SELECT json_object('version', (SELECT transform_version FROM _weir_query_groups WHERE group_id = ?), " +
      // json(): a subquery's value loses its JSON subtype, and json_object would embed it as text.
      "'queries', json((SELECT json_group_array(json_object('hash', hash, 'name', name, 'args', json(args))) " +
      "FROM _weir_queries WHERE group_id = ?)))",
    params([jsonString(groupID), jsonString(groupID)]),
  )[0][0];
}
