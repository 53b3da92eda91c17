// Pushes: a group's claim, the preflight of each mutation (one or a batch), and the record of
// processed mutations that commits their version.
import { COLUMN_SEPARATOR, ROW_SEPARATOR } from "../abi.js";
import { checkEngineResult } from "../engine-error.js";
import type { MutationRef, Preflight, PreflightStatus, SqlAdapter } from "../types.js";
import type { EngineCore } from "./core.js";

/** A mutation of a push batch, within its client group. */
export type BatchEntry = Omit<MutationRef, "clientGroupID">;

export function claimGroup(core: EngineCore, db: SqlAdapter, groupID: string, userID: string): void {
  core.call(db, [], () => checkEngineResult(core.wasm.claimGroup({ groupID, userID })));
}

export function preflight(core: EngineCore, db: SqlAdapter, ref: MutationRef): Preflight {
  const result = core.call(db, [], () =>
    core.wasm.preflight({ groupID: ref.clientGroupID, clientID: ref.clientID, id: ref.mutationID }),
  );
  return parsePreflight(result);
}

export function preflightBatch(
  core: EngineCore,
  db: SqlAdapter,
  groupID: string,
  mutations: readonly BatchEntry[],
): Preflight[] {
  if (mutations.length === 0) return [];
  // A statement per client, not per mutation: the clients go as extra parameters, their ids
  // as a line each.
  const byClient = new Map<string, number[]>();
  mutations.forEach(({ clientID }, index) => {
    const indexes = byClient.get(clientID);
    if (indexes) indexes.push(index);
    else byClient.set(clientID, [index]);
  });
  const plan = [...byClient.values()]
    .map((indexes) => indexes.map((index) => mutations[index]!.mutationID).join(","))
    .join(ROW_SEPARATOR);
  const lines = core
    .call(db, [...byClient.keys()], () => core.wasm.preflightBatch({ groupID, plan }))
    .split(ROW_SEPARATOR);
  const preflights = new Array<Preflight>(mutations.length);
  let line = 0;
  for (const indexes of byClient.values()) {
    for (const index of indexes) preflights[index] = parsePreflight(lines[line++]!);
  }
  return preflights;
}

export function finalize(core: EngineCore, db: SqlAdapter, ref: MutationRef): void {
  core.call(db, [], () =>
    core.wasm.finalize({ groupID: ref.clientGroupID, clientID: ref.clientID, id: ref.mutationID }),
  );
}

export function finalizeBatch(
  core: EngineCore,
  db: SqlAdapter,
  groupID: string,
  processed: readonly BatchEntry[],
): void {
  if (processed.length === 0) return;
  const last = new Map<string, number>();
  for (const { clientID, mutationID } of processed)
    last.set(clientID, Math.max(last.get(clientID) ?? 0, mutationID));
  const lastIDs = [...last.values()].join(ROW_SEPARATOR);
  core.call(db, [...last.keys()], () => core.wasm.finalizeBatch({ groupID, lastIDs }));
}

/** "<status>\t<last id>" */
function parsePreflight(line: string): Preflight {
  const tab = line.indexOf(COLUMN_SEPARATOR);
  return { status: line.slice(0, tab) as PreflightStatus, lastMutationID: Number(line.slice(tab + 1)) };
}
