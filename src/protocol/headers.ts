/**
 * The header names the browser client sends and reads: the client imports these alone, so an
 * app's bundle does not carry the server's (`HEADER` has every one).
 */
export const CLIENT_HEADER = {
  authorization: 'authorization',
  contentType: 'content-type',
  accept: 'accept',
  partId: 'x-part-id',
  timeoutSeconds: 'timeout-seconds',
  lastEventId: 'last-event-id',
  peekSettled: 'x-peek-settled',
  sessionSettled: 'x-session-settled',
} as const;

/**
 * Header names of the session protocol, lower-case as `Headers` returns them: the client's and
 * the server's own. Built by a call marked pure, so a bundle that imports only `CLIENT_HEADER`
 * drops it (an object spread is kept: a bundler cannot prove it free of effects).
 */
export const HEADER = /* @__PURE__ */ Object.assign({}, CLIENT_HEADER, {
  streamVersion: 'x-stream-version',
  triggerJwt: 'x-trigger-jwt',
  triggerJwtClaims: 'x-trigger-jwt-claims',
  rateLimitLimit: 'x-ratelimit-limit',
  rateLimitRemaining: 'x-ratelimit-remaining',
  rateLimitReset: 'x-ratelimit-reset',
} as const);

/** Header names carried inside `.out` records. */
export const RECORD_HEADER = {
  control: 'trigger-control',
  publicAccessToken: 'public-access-token',
  sessionInEventId: 'session-in-event-id',
  /** A command record's single header has an empty name. */
  command: '',
} as const;

export const CONTROL = {
  turnComplete: 'turn-complete',
  upgradeRequired: 'upgrade-required',
} as const;

export const COMMAND_TRIM = 'trim';
export const EVENT_STREAM = 'text/event-stream';
export const STREAM_VERSION_V2 = 'v2';
/** Data chunk types of the legacy control form. */
export const LEGACY_CONTROL_PREFIX = 'trigger:';
