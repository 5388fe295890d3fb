/**
 * How a live turn that has gone quiet finds out whether its agent run still lives. The
 * source is the session row: the app's `startSession` is idempotent and (with the route
 * helpers) returns the row's `currentRunId`.
 *
 * Trade-off: checking sooner ends a dead turn sooner but calls the app's `startSession`
 * more often while a healthy agent is silent (a slow tool). With the defaults a turn whose
 * run is gone ends about 5 s after its last record (4 s of silence, one check, 1 s to
 * confirm); a silent healthy agent costs one check at 4 s, then at 7, 13, 25 s and every
 * 30 s, and is never cut off while the row names a live run (any run: a continuation or the run
 * an upgrade hands over to answers the turn too).
 */
export interface LivenessOptions {
  /** Silence (no `.out` record) before the first check. Default 4 000 ms. */
  checkAfterMs?: number;
  /** Wait before the second check; doubles after each check that finds the run alive. Default 3 000 ms. */
  checkIntervalMs?: number;
  /** Longest wait between two checks. Default 30 000 ms. */
  maxCheckIntervalMs?: number;
  /**
   * After a check found no run live, the turn ends once this much more time passed with no
   * record while `.out` was readable (a connection open at the verdict or opened since, even
   * a long poll that ended early): a turn-complete in flight wins. Default 1 000 ms.
   */
  confirmMs?: number;
  /**
   * When nothing reports the run (`startSession` returns no `currentRunId`, or every check
   * fails), a live turn silent this long ends with `RUN_GONE`. Default 240 000 ms (4 minutes).
   */
  maxSilenceMs?: number;
}

export type ResolvedLivenessOptions = Required<LivenessOptions>;

export const DEFAULT_LIVENESS_OPTIONS: ResolvedLivenessOptions = {
  checkAfterMs: 4_000,
  checkIntervalMs: 3_000,
  maxCheckIntervalMs: 30_000,
  confirmMs: 1_000,
  maxSilenceMs: 240_000,
};

export function resolveLivenessOptions(options: LivenessOptions | undefined): ResolvedLivenessOptions {
  const resolved = { ...DEFAULT_LIVENESS_OPTIONS };
  if (options === undefined) return resolved;
  for (const key of Object.keys(resolved) as (keyof ResolvedLivenessOptions)[]) {
    const value = options[key];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) resolved[key] = value;
  }
  return resolved;
}
