import type { ZeroMutationResult, ZeroMutationsPatchOp } from "@weir/protocol";

/** A mutation's application error, as stored and as a poke carries it. */
export interface MutationResult {
  clientID: string;
  id: number;
  result: ZeroMutationResult;
}

/**
 * The application errors of a group's mutations, from the poke that carries each until its
 * client acknowledges it (`ackMutationResponses`): the next poke puts the new ones and deletes
 * the acknowledged ones. A full poke (the client starts again from its last cookie, having
 * perhaps missed the poke that carried a result) puts every one not yet acknowledged again.
 */
export class MutationResults {
  /** Not yet acknowledged, by client and id. */
  private readonly unacked = new Map<string, Map<number, ZeroMutationResult>>();
  private patch: ZeroMutationsPatchOp[] = [];

  /** A mutation's application error, for the next poke. */
  add({ clientID, id, result }: MutationResult): void {
    let mine = this.unacked.get(clientID);
    if (!mine) {
      mine = new Map();
      this.unacked.set(clientID, mine);
    }
    mine.set(id, result);
    this.patch.push({ op: "put", mutation: { id: { clientID, id }, result } });
  }

  /** The client has seen its results up to `id`: the next poke deletes them. */
  acknowledged(clientID: string, id: number): void {
    const mine = this.unacked.get(clientID);
    if (!mine) return;
    for (const mutationID of [...mine.keys()].sort((a, b) => a - b)) {
      if (mutationID > id) continue;
      mine.delete(mutationID);
      this.patch.push({ op: "del", id: { clientID, id: mutationID } });
    }
  }

  /** The clients left the group: their results go with them. */
  forget(clientIDs: readonly string[]): void {
    for (const clientID of clientIDs) this.unacked.delete(clientID);
  }

  /** Takes the next poke's mutationsPatch. */
  take(full: boolean): ZeroMutationsPatchOp[] {
    let patch = this.patch;
    this.patch = [];
    if (full) {
      patch = patch.filter((op) => op.op === "del");
      for (const [clientID, mine] of this.unacked) {
        for (const [id, result] of mine)
          patch.push({ op: "put", mutation: { id: { clientID, id }, result } });
      }
    }
    return patch;
  }
}
