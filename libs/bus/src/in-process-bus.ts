type Listener = (payload: Uint8Array) => void;

/**
 * A subject-addressed bus inside one process: the embedded stand-in for NATS. Payloads travel
 * as encoded bytes and are delivered asynchronously, as over the network, so consumers run the
 * same decoding and validation as with NATS.
 */
export class InProcessBus {
  private readonly listeners = new Map<string, Set<Listener>>();

  subscribe(subject: string, listener: Listener): () => void {
    let set = this.listeners.get(subject);
    if (!set) {
      set = new Set();
      this.listeners.set(subject, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  publish(subject: string, payload: Uint8Array): void {
    const set = this.listeners.get(subject);
    if (!set || set.size === 0) return;
    for (const listener of set) {
      queueMicrotask(() => listener(payload));
    }
  }
}
