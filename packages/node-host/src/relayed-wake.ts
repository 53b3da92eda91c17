import type { AudienceProbe } from "@weir/engine-wasm";
import { AudienceIndex, type Subscription, type Wake, type WakeAudience } from "@weir/host-core";

/**
 * The wake port of a namespace worker. The sockets live on the routing thread, which tells the
 * worker each one that opens or closes for its namespaces, with its subscription; host-core's
 * decision of whom to wake is made here, on the worker's index of them, and the chosen socket
 * ids are relayed.
 */
export class RelayedWake implements Wake {
  private readonly byNamespace = new Map<string, AudienceIndex<number>>();
  private readonly sockets = new Map<number, { namespace: string; clientID: string }>();

  constructor(private readonly relay: (ids: number[]) => void) {}

  opened(id: number, namespace: string, clientID: string, subscription: Subscription): void {
    let index = this.byNamespace.get(namespace);
    if (!index) {
      index = new AudienceIndex();
      this.byNamespace.set(namespace, index);
    }
    index.add(id, subscription);
    this.sockets.set(id, { namespace, clientID });
  }

  closed(id: number): void {
    const socket = this.sockets.get(id);
    if (socket === undefined) return;
    this.sockets.delete(id);
    const index = this.byNamespace.get(socket.namespace);
    index?.remove(id);
    if (index?.size === 0) this.byNamespace.delete(socket.namespace);
  }

  send(namespace: string, audience: WakeAudience, exceptClientID: string | null): number {
    const ids: number[] = [];
    for (const id of this.byNamespace.get(namespace)?.select(audience) ?? []) {
      if (this.sockets.get(id)?.clientID !== exceptClientID) ids.push(id);
    }
    if (ids.length > 0) this.relay(ids);
    return ids.length;
  }

  count(namespace: string): number {
    return this.byNamespace.get(namespace)?.size ?? 0;
  }

  probes(namespace: string): ReadonlyMap<string, AudienceProbe> {
    return this.byNamespace.get(namespace)?.probes() ?? new Map();
  }
}
