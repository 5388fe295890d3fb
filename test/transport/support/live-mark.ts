import type { SessionStore } from '../../../src/client/session-store.js';
import { type LegacyLiveFields, turnsFromLegacy } from '../../../src/client/turn-records.js';

/**
 * What a page saved that went away with a turn live, written as that page's ledger would
 * hold it (the live mark is read from the ledger, never written by hand).
 */
export function markLive(store: SessionStore, fields: Omit<LegacyLiveFields, 'turnLive'>): void {
  store.setState({ turns: turnsFromLegacy({ turnLive: true, ...fields }) });
}
