/**
 * Where the stream `relay` hands to `useChat` stands. Only `streaming` and `failing` are open:
 * leaving them for `parked` or `ended` is the one moment the stream is over for the page.
 *
 * - `streaming`: the source is read and its chunks handed over (deltas paced).
 * - `failing`: the source failed while a delta was held. The delta is handed over first (erroring
 *   the stream at once would discard it from the queue), and the next pull raises the failure.
 * - `parked`: the chat was left (released, superseded, or no component held it when its signal
 *   aborted). It hears nothing more, neither end nor error nor a held delta: the reply resumes
 *   when the chat is shown again.
 * - `ended`: closed, errored, or cancelled by `useChat`. An abort that closed it is judged a
 *   macrotask later (the user's stop, or a cleanup that only disconnects).
 */
export type RelayPhase =
  | { readonly type: 'streaming' }
  | { readonly type: 'failing'; readonly error: unknown }
  | { readonly type: 'parked' }
  | { readonly type: 'ended' };

/** What moves the relay from one phase to another (see `nextRelayPhase`). */
export type RelayEvent =
  /** The chat's signal aborted; `left`: no component held the chat (or it was released) when it did. */
  | { readonly type: 'aborted'; readonly left: boolean }
  /**
   * Reading the source failed, or the failure `failing` kept is raised now. `left`: the session
   * was released or this resume superseded; `held`: the pacer holds a delta.
   */
  | { readonly type: 'failed'; readonly error: unknown; readonly left: boolean; readonly held: boolean }
  /** The source ended. */
  | { readonly type: 'done' }
  /** `useChat` cancelled the stream (it does on an `error` chunk). */
  | { readonly type: 'cancelled' };

const ENDED: RelayPhase = { type: 'ended' };
const PARKED: RelayPhase = { type: 'parked' };

/** Where every relay starts. */
export const STREAMING: RelayPhase = { type: 'streaming' };

/**
 * The one transition function of `RelayPhase`; `–`: the event leaves the phase as it is.
 *
 * | phase \ event | aborted, left | aborted | failed, left | failed, held    | failed | done                    | cancelled |
 * |---------------|---------------|---------|--------------|-----------------|--------|-------------------------|-----------|
 * | streaming     | parked        | ended   | parked       | failing (error) | ended  | ended                   | ended     |
 * | failing       | parked        | ended   | parked       | ended           | ended  | – (no read is underway) | ended     |
 * | parked        | –             | –       | –            | –               | –      | –                       | –         |
 * | ended         | –             | –       | –            | –               | –      | –                       | –         |
 *
 * `left` goes first: a chat that was left drops what is held rather than show it. `failing`
 * raises its failure as `failed` with `left` asked again, since the session may have been
 * released meanwhile; nothing is held by then (no read follows the failure), so only one
 * failure is ever kept.
 */
export function nextRelayPhase(phase: RelayPhase, event: RelayEvent): RelayPhase {
  if (phase.type === 'parked' || phase.type === 'ended') return phase;
  switch (event.type) {
    case 'aborted':
      return event.left ? PARKED : ENDED;
    case 'failed':
      if (event.left) return PARKED;
      return phase.type === 'streaming' && event.held ? { type: 'failing', error: event.error } : ENDED;
    case 'done':
      return phase.type === 'streaming' ? ENDED : phase;
    case 'cancelled':
      return ENDED;
  }
}
