/**
 * What the conformance suite needs to know about a server. Everything beyond the base URL,
 * the secret key and the agent's task id is optional: a missing capability skips only the
 * cases that need it, and the report says which.
 */
export interface ConformanceTarget {
  baseURL: string;
  secretKey: string;
  /** An agent that answers a user message with text and a turn-complete. */
  taskIdentifier: string;
  options?: ConformanceOptions;
}

export interface ConformanceOptions {
  /** Keepalive interval of `.out` while idle. Default 5000 (the spec's "about every 5 s"). */
  pingIntervalMs?: number;
  /** Upper bound on the delay before a trim command follows a turn-complete. Default 60000. */
  trimDelayMs?: number;
  /** The target can be told to fail on purpose (see `faults`). */
  supportsFaults?: boolean;
  /** How to fault the target; required for the fault cases when `supportsFaults` is set. */
  faults?: ConformanceFaults;
  /** Valid `metadata` for every payload (an agent whose schema requires a field needs it). */
  metadata?: unknown;
  /** Metadata that fails the agent's schema. Without it the validation-failure case is skipped. */
  invalidMetadata?: unknown;
  /** A valid action payload that makes the agent stream text. Without it the action case is skipped. */
  action?: unknown;
  /**
   * Metadata that makes the agent's reply last at least `slowTurnMs`. Without it the stop and
   * mid-turn cases are skipped.
   */
  slowTurnMetadata?: unknown;
  slowTurnMs?: number;
  /**
   * A user message text that makes the agent end its run after replying (end-of-run call).
   * Without it the continuation case is skipped.
   */
  endRunText?: string;
  /** A user message text that makes the agent call a tool that needs approval. Without it that case is skipped. */
  toolApprovalText?: string;
  /** A user message text that makes the agent call a tool whose output the user supplies. */
  toolOutputText?: string;
  /** A user message text that makes the agent request an upgrade mid-turn. Without it that case is skipped. */
  upgradeText?: string;
  /**
   * The target sends the wire notes' turn correlation: `seq` in append answers and
   * `session-in-event-id` on turn-complete records. Default true; `false` checks that a
   * server without them (the spec's minimum) passes everything else.
   */
  turnCorrelation?: boolean;
  /** Mints a JWT with the given scopes the way the service's own tools do. Without it the scoped-JWT cases are skipped. */
  mintToken?: (scopes: string[]) => Promise<string>;
}

export interface ConformanceFaults {
  /** Makes the next `.in` append of any session answer 429 with the rate-limit headers. */
  rateLimitNextAppend(): void | Promise<void>;
  /** Makes the next `.in` append answer 500 without storing anything. */
  failNextAppend?(): void | Promise<void>;
  /** Makes the next turn of this session crash its run after a few chunks. */
  crashNextTurn?(sessionId: string): void | Promise<void>;
  /** Makes the next `.out` connection send an `error` event and close without `[DONE]`. */
  errorOnNextRead?(): void | Promise<void>;
}

/** Options with their defaults filled in, so cases read one place. */
export interface ResolvedConformanceTarget extends ConformanceTarget {
  baseURL: string;
  options: ConformanceOptions & { pingIntervalMs: number; trimDelayMs: number; slowTurnMs: number };
}

export function resolveTarget(target: ConformanceTarget): ResolvedConformanceTarget {
  const options = target.options ?? {};
  return {
    ...target,
    baseURL: target.baseURL.replace(/\/+$/, ''),
    options: {
      ...options,
      pingIntervalMs: options.pingIntervalMs ?? 5_000,
      trimDelayMs: options.trimDelayMs ?? 60_000,
      slowTurnMs: options.slowTurnMs ?? 3_000,
    },
  };
}
