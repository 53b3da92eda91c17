import type { Wake } from "@weir/host-core";

/**
 * The wake port of a namespace worker. The sockets live on the routing thread, which tells the
 * worker each one that opens or closes for its namespaces; host-core's decision of whom to wake
 * is made here, on the worker's copy, and relayed.
 */
export class RelayedWake implements Wake {
  private readonly byNamespace = new Map<string, Map<number, string>>();
  private readonly namespaceOf = new Map<number, string>();

  constructor(private readonly relay: (namespace: string, except: string | null) => void) {}

  opened(id: number, namespace: string, clientID: string): void {
    let sockets = this.byNamespace.get(namespace);
    if (!sockets) {
      sockets = new Map();
      this.byNamespace.set(namespace, sockets);
    }
    sockets.set(id, clientID);
    this.namespaceOf.set(id, namespace);
  }

  closed(id: number): void {
    const namespace = this.namespaceOf.get(id);
    if (namespace === undefined) return;
    this.namespaceOf.delete(id);
    const sockets = this.byNamespace.get(namespace);
    sockets?.delete(id);
    if (sockets?.size === 0) this.byNamespace.delete(namespace);
  }

  send(namespace: string, exceptClientID: string | null): number {
    let sent = 0;
    for (const clientID of this.byNamespace.get(namespace)?.values() ?? []) {
      if (clientID !== exceptClientID) sent++;
    }
    if (sent > 0) this.relay(namespace, exceptClientID);
    return sent;
  }

  count(namespace: string): number {
    return this.byNamespace.get(namespace)?.size ?? 0;
  }
}
