import type { BroadcastChannelLike } from '../../../src/session/tab-channel.js';

/**
 * BroadcastChannels of one browser in memory: a message reaches every other open channel of
 * its name (not its sender) a moment later, as a task of the receiving page would, here a
 * microtask, so that tests on a manual clock see it before the clock moves again.
 */
export function memoryChannels(): (name: string) => BroadcastChannelLike {
  const open = new Map<string, Set<Set<(event: MessageEvent) => void>>>();
  return (name) => {
    const listeners = new Set<(event: MessageEvent) => void>();
    const peers = open.get(name) ?? new Set();
    open.set(name, peers);
    peers.add(listeners);
    return {
      postMessage(message) {
        if (!peers.has(listeners)) return;
        const data = structuredClone(message);
        for (const peer of peers) {
          if (peer === listeners) continue;
          queueMicrotask(() => {
            if (!peers.has(peer)) return;
            for (const listener of [...peer]) listener({ data } as MessageEvent);
          });
        }
      },
      addEventListener: (_type, listener) => listeners.add(listener),
      removeEventListener: (_type, listener) => listeners.delete(listener),
      close: () => peers.delete(listeners),
    };
  };
}
