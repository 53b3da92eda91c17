/** A push after validation, one shape for both dialects. */
export interface PushBatch {
  clientGroupID: string;
  mutations: PushMutation[];
}

export interface PushMutation {
  clientID: string;
  id: number;
  name: string;
  /** Native: the first element of `args`; Replicache: `args` as sent. */
  args: unknown;
  timestamp?: number;
}
