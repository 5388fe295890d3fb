/**
 * A claim this tab posted for the lease, still in the running: it wins when its window ends (see
 * `TabCoordinator.acquire`) unless an owner is heard or a rival's claim outranks it first. `id`
 * tells this tab's claims apart (two may be in flight: a reload's and a send's).
 */
export interface PendingClaim {
  id: number;
  at: number;
}

/**
 * Where a `TabCoordinator` stands with the chat's turn, in every mode.
 *
 * - `idle`: this tab does not own the turn (and has no claim in flight).
 * - `claiming`: the lease only: claims posted that may still win, their windows running. Web
 *   Locks have no such phase: the browser queues a request until the lock is granted.
 * - `owning`: this tab owns the turn. `letGo` gives the hold up when the phase is left: it ends
 *   the lock's callback (Web Locks), or stops the heartbeats and tells the other tabs (the lease).
 * - `disposed`: the chat is gone for good; nothing is owned or claimed again.
 *
 * `none` (neither locks nor a channel) stays `idle`: every tab acts alone without owning.
 */
export type CoordinatorPhase =
  | { type: 'idle' }
  | { type: 'claiming'; claims: readonly PendingClaim[] }
  | { type: 'owning'; letGo: () => void }
  | { type: 'disposed' };

/** What moves a coordinator from one phase to another (see `nextCoordinatorPhase`). */
export type CoordinatorEvent =
  /** This tab posted a claim (the lease). */
  | { type: 'claim'; id: number; at: number }
  /** Another tab beat or started a turn: it owns the turn, so every claim in flight is lost. */
  | { type: 'ownerHeard' }
  /** Another tab claimed at `at`; `winsTie`: its tabId sorts before this tab's (lowest (at, tabId) wins). */
  | { type: 'rivalClaim'; at: number; winsTie: boolean }
  /** The window of claim `id` ended: a claim still in the running wins the turn, held by `letGo`. */
  | { type: 'windowEnded'; id: number; letGo: () => void }
  /** Web Locks granted the lock, held until `letGo`. */
  | { type: 'granted'; letGo: () => void }
  | { type: 'release' }
  | { type: 'dispose' };

/**
 * The one transition function of `CoordinatorPhase`; `–`: the event leaves the phase as it is.
 *
 * | phase \ event | claim              | ownerHeard | rivalClaim                                       | windowEnded                        | granted | release | dispose  |
 * |---------------|--------------------|------------|--------------------------------------------------|------------------------------------|---------|---------|----------|
 * | idle          | claiming (1 claim) | –          | –                                                | –                                  | owning  | –       | disposed |
 * | claiming      | claiming (+ claim) | idle       | outranked claims drop out (idle if none is left) | its claim still in: owning; else – | –       | –       | disposed |
 * | owning        | –                  | –          | –                                                | –                                  | –       | idle    | disposed |
 * | disposed      | –                  | –          | –                                                | –                                  | –       | –       | –        |
 *
 * A claim decides on what was heard during its own window, so when two are in flight the first
 * to win owns the turn and the other's end finds `owning` (its caller is then the owner too). A
 * claim that lost still waits out its window (its caller learns the outcome then), and one whose
 * window ends after the phase left `claiming` changes nothing: a tab that owned and let go
 * meanwhile does not take the turn again on a stale claim. A lock granted while this tab owns,
 * or after it is disposed, is not taken (its callback lets it go at once). Leaving `owning` in
 * any way lets the hold go (`TabCoordinator` calls `letGo`).
 */
export function nextCoordinatorPhase(phase: CoordinatorPhase, event: CoordinatorEvent): CoordinatorPhase {
  if (phase.type === 'disposed') return phase;
  switch (event.type) {
    case 'dispose':
      return { type: 'disposed' };
    case 'release':
      return phase.type === 'owning' ? { type: 'idle' } : phase;
    case 'granted':
      return phase.type === 'idle' ? { type: 'owning', letGo: event.letGo } : phase;
    case 'claim':
      if (phase.type === 'owning') return phase;
      return {
        type: 'claiming',
        claims: [...(phase.type === 'claiming' ? phase.claims : []), { id: event.id, at: event.at }],
      };
    case 'ownerHeard':
      return phase.type === 'claiming' ? { type: 'idle' } : phase;
    case 'rivalClaim': {
      if (phase.type !== 'claiming') return phase;
      const claims = phase.claims.filter(
        (claim) => claim.at < event.at || (claim.at === event.at && !event.winsTie),
      );
      return claims.length > 0 ? { type: 'claiming', claims } : { type: 'idle' };
    }
    case 'windowEnded':
      return phase.type === 'claiming' && phase.claims.some((claim) => claim.id === event.id)
        ? { type: 'owning', letGo: event.letGo }
        : phase;
  }
}
