/** Limits of the session protocol, named once. Sizes are UTF-8 bytes. */
export const MIB = 1024 * 1024;
/** Largest `.in` append body the service accepts. */
export const MAX_APPEND_BODY_BYTES = MIB;
/** Ceiling on the stored `.in` record, which wraps the body in JSON (escapes can double it). */
export const MAX_STORED_RECORD_BYTES = MIB;
/**
 * Most characters the client buffers for one `.out` SSE event (an unterminated line or a
 * multi-line event). A stored record is at most about 1 MiB (2 MiB once JSON-escaped in a
 * batch) and the service's stream store reads about 1 MiB per batch: 16 MiB leaves room for
 * a server that batches more, and still bounds what a hostile or broken wire can pin.
 */
export const MAX_SSE_EVENT_CHARS = 16 * MIB;
export const MAX_SESSION_TAGS = 10;
export const MIN_MAX_ATTEMPTS = 1;
export const MAX_MAX_ATTEMPTS = 10;
export const MIN_IDLE_TIMEOUT_SECONDS = 1;
export const MAX_IDLE_TIMEOUT_SECONDS = 3600;
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 30;
export const MIN_TIMEOUT_SECONDS = 1;
export const MAX_TIMEOUT_SECONDS = 600;
export const DEFAULT_TIMEOUT_SECONDS = 60;
export const MAX_CLOSE_REASON_LENGTH = 256;
/** `X-Part-Id`: opaque ASCII, up to about 64 characters (wire notes). */
export const MAX_PART_ID_LENGTH = 64;
export const TOKEN_LIFETIME_SECONDS = 60 * 60;
export const PING_INTERVAL_MS = 5_000;
/** `.out` trims are eventually consistent within this window. */
export const TRIM_DELAY_RANGE_MS = { min: 10_000, max: 60_000 } as const;
export const SESSION_ID_PREFIX = 'session_';
export const RUN_ID_PREFIX = 'run_';
export const SESSION_TYPE = 'chat.agent';
