// What a namespace's engine state holds, read for operators and tests: the log's position,
// its changes, the clients and a group's mutation ids.
import { COLUMN_SEPARATOR } from "../abi.js";
import { EngineError } from "../engine-error.js";
import type { EngineState, SqlAdapter } from "../types.js";
import type { EngineCore } from "./core.js";

export interface ClientRecord {
  clientID: string;
  clientGroupID: string;
  userID: string;
  lastMutationID: number;
}

export function state(core: EngineCore, db: SqlAdapter, engineVersion: string): EngineState {
  const result = core.call(db, [], () => core.wasm.state());
  if (result === "") throw new EngineError("internal", "the engine is not installed in this database");
  const [watermark, floor, changes, clients, clientGroups] = result
    .split(COLUMN_SEPARATOR)
    .map(Number) as number[];
  return {
    engineVersion,
    watermark: watermark!,
    floor: floor!,
    changes: changes!,
    clients: clients!,
    clientGroups: clientGroups!,
  };
}

export function listChanges(
  core: EngineCore,
  db: SqlAdapter,
  since: number,
  limit: number,
): { version: number; table: string; key: unknown[] }[] {
  return JSON.parse(core.call(db, [], () => core.wasm.listChanges({ since, limit })));
}

export function clients(core: EngineCore, db: SqlAdapter): ClientRecord[] {
  return JSON.parse(core.call(db, [], () => core.wasm.clients()));
}

export function groupMutationIDs(
  core: EngineCore,
  db: SqlAdapter,
  groupID: string,
  userID: string,
): Record<string, number> {
  return JSON.parse(core.call(db, [], () => core.wasm.groupMutationIDs({ groupID, userID })));
}
