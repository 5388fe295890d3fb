/**
 * A claim this tab posted for the lease, still in the running: it wins when its window ends (see
 * `TabCoordinator.acquire`) unless an owner is heard or a rival's claim outranks it first. `id`
 * tells this tab's claims apart (two may be in flight: a follow's or a reload's, and a send's).
 */
export interface PendingClaim {
  id: number;
  at: number;
}

/**
 * Where a `TabCoordinator` stands with the chat's turn, in every mode.
 *
 * - `idle`: this tab does not own the turn and has no claim in flight.
 * - `claiming`: the lease only: claims posted that may still win, their windows running. Web
 *   Locks have no such phase: the browser queues a request until the lock is granted.
 * - `owning`: this tab owns the turn. `letGo` gives the hold up when the phase is left: it ends
 *   the lock's callback (Web Locks), or stops the heartbeats and tells the other tabs (the lease).
 *   `claims`: this tab's other tries still in flight (a follow's and a send's may run together):
 *   one still in when the tab lets go wins the turn back at its window's end, so a send is not
 *   refused because a follow of the same tab took the turn and let it go meanwhile.
 * - `disposed`: the chat is gone for good; nothing is owned or claimed again.
 *
 * `none` (neither locks nor a channel) stays `idle`: every tab acts alone without owning.
 */
export type CoordinatorPhase =
  | { type: 'idle' }
  | { type: 'claiming'; claims: readonly PendingClaim[] }
  | { type: 'owning'; letGo: () => void; claims: readonly PendingClaim[] }
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
 * The claims in flight are those of `claiming` and `owning` (none when `idle`).
 *
 * | phase \ event | claim              | ownerHeard         | rivalClaim                | windowEnded                                   | granted | release                                | dispose  |
 * |---------------|--------------------|--------------------|---------------------------|-----------------------------------------------|---------|----------------------------------------|----------|
 * | idle          | claiming (1 claim) | –                  | –                         | –                                             | owning  | –                                      | disposed |
 * | claiming      | claiming (+ claim) | idle               | outranked claims drop out | its claim still in: owning (its hold); else – | –       | –                                      | disposed |
 * | owning        | owning (+ claim)   | owning (no claims) | outranked claims drop out | its claim drops out (the hold stays)          | –       | claiming if claims are left, else idle | disposed |
 * | disposed      | –                  | –                  | –                         | –                                             | –       | –                                      | –        |
 *
 * `claiming` with no claim left is `idle`. A claim decides on what was heard during its own
 * window: it wins if it is still in the running when the window ends (`claimInRunning`), then
 * as the owner's hold when the tab was not owning (the other claims stay in flight), or as
 * nothing more when it already was (one hold, one heartbeat). A lock granted while this tab owns, or after it is disposed, is not
 * taken (its callback lets it go at once). Leaving `owning` in any way lets the hold go
 * (`TabCoordinator` calls `letGo`).
 */
export function nextCoordinatorPhase(phase: CoordinatorPhase, event: CoordinatorEvent): CoordinatorPhase {
  if (phase.type === 'disposed') return phase;
  const claims = 'claims' in phase ? phase.claims : [];
  switch (event.type) {
    case 'dispose':
      return { type: 'disposed' };
    case 'granted':
      return phase.type === 'idle' ? { type: 'owning', letGo: event.letGo, claims: [] } : phase;
    case 'release':
      return phase.type === 'owning' ? withClaims({ type: 'idle' }, claims) : phase;
    case 'claim':
      return withClaims(phase, [...claims, { id: event.id, at: event.at }]);
    case 'ownerHeard':
      return withClaims(phase, []);
    case 'rivalClaim':
      return withClaims(
        phase,
        claims.filter((claim) => claim.at < event.at || (claim.at === event.at && !event.winsTie)),
      );
    case 'windowEnded':
      if (!claimInRunning(phase, event.id)) return phase;
      return withClaims(
        phase.type === 'owning' ? phase : { type: 'owning', letGo: event.letGo, claims },
        claims.filter((claim) => claim.id !== event.id),
      );
  }
}

/** True when claim `id` has not lost yet: at its window's end, it wins. */
export function claimInRunning(phase: CoordinatorPhase, id: number): boolean {
  return 'claims' in phase && phase.claims.some((claim) => claim.id === id);
}

/** `phase` with `claims` in flight: `owning` keeps them; otherwise `claiming`, or `idle` when there are none. */
function withClaims(
  phase: Exclude<CoordinatorPhase, { type: 'disposed' }>,
  claims: readonly PendingClaim[],
): CoordinatorPhase {
  if (phase.type === 'owning') return { ...phase, claims };
  return claims.length > 0 ? { type: 'claiming', claims } : { type: 'idle' };
}
