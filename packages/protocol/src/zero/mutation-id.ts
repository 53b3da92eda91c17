import * as v from "valibot";
import { IdString, MutationId } from "../fields.js";

/** A mutation named by its client and id (`ackMutationResponses`, `mutationsPatch`, PushFailed). */
export const ZeroMutationID = v.object({ id: MutationId, clientID: IdString });
export type ZeroMutationID = v.InferOutput<typeof ZeroMutationID>;
