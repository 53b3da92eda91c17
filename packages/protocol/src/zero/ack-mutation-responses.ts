import type * as v from "valibot";
import { ZeroMutationID } from "./mutation-id.js";

/** `["ackMutationResponses", body]`, up: the client saw its mutations' results up to this one. */
export const ZeroAckMutationResponsesBody = ZeroMutationID;
export type ZeroAckMutationResponsesBody = v.InferOutput<typeof ZeroAckMutationResponsesBody>;
