import { randomBytes } from 'node:crypto';
import {
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  PING_INTERVAL_MS,
  TOKEN_LIFETIME_SECONDS,
} from '../protocol/limits.js';
import type { AnyAgent } from './agents/define-agent.js';
import type { WireOptions } from './faults.js';
import { consoleLogger, type DevServerLogger } from './logger.js';
import type { ObjectStore } from './store/object-store.js';

export interface DevServerOptions {
  /** Agents served, by `id` (the create call's `taskIdentifier`). Default: `[demoAgent]`. */
  agents?: AnyAgent[];
  /**
   * Serves a session whose `taskIdentifier` names none of `agents`, so an app can keep its
   * production task id locally; each such id is logged once. Default: none (404).
   */
  defaultAgent?: AnyAgent;
  /** Secret API key. Default: a random `sk_dev_…`, returned on the server. */
  secretKey?: string;
  /** Keepalive `ping` interval on an idle `.out` stream. Default 5000 ms. */
  pingIntervalMs?: number;
  /** Delay before a turn's trim takes effect. Default 15000 ms (the spec says 10-60 s). */
  trimDelayMs?: number;
  /** Lifetime of minted session tokens. Default 3600 s. */
  tokenTtlSeconds?: number;
  /** Idle timeout when neither the session nor the agent sets one. Default 30 s. */
  idleTimeoutSeconds?: number;
  /**
   * Folder that keeps sessions across restarts: rows, run state, `.in` / `.out` (one
   * append-only journal per session, synced before an append is answered or a record is
   * served) and snapshots. A restart on the same folder serves every session again; a turn
   * a restart cut ends as a crashed run's does. Default: none, everything in memory (the
   * CLI passes `--data-dir`, default `.durable-chat`).
   */
  dataDir?: string;
  /** Where snapshots live: `'memory'`, `{ dir }`, or your own store. Default: `{ dir: dataDir }`, else memory. */
  objectStore?: 'memory' | { dir: string } | ObjectStore;
  /** How long a peek (`X-Peek-Settled: 1`) stream stays open after draining. Default 1000 ms. */
  peekCloseMs?: number;
  /** Most records in one `batch` event. Default 1000. */
  maxBatchRecords?: number;
  /** Most `.out` long polls open at once per session (one token); more answer 429. Default 16. */
  maxStreamsPerSession?: number;
  /** Agent failures and I/O errors go here. Default: `console.warn`. */
  logger?: DevServerLogger;
  /** Clock for token issue and expiry (tests move time instead of sleeping). Default `Date.now`. */
  clock?: () => number;
  /**
   * What the server sends beyond the spec (the wire notes): `seq` in append answers and
   * `session-in-event-id` on turn-complete records. Default both `true`; `false` serves a
   * server without them (`faults.omitTurnCorrelation()` switches both on a live server).
   */
  wire?: Partial<WireOptions>;
  /**
   * A cold start, simulated: every new run (first or continuation) waits this long before it
   * boots, as a real run waits to be dequeued and its process to start. Default 0.
   */
  bootDelayMs?: number;
}

/** Options with every default filled in: defaults live here and nowhere else. */
export interface ResolvedDevServerOptions {
  agents: AnyAgent[];
  defaultAgent: AnyAgent | undefined;
  secretKey: string;
  pingIntervalMs: number;
  trimDelayMs: number;
  tokenTtlSeconds: number;
  idleTimeoutSeconds: number;
  dataDir: string | undefined;
  objectStore: 'memory' | { dir: string } | ObjectStore;
  peekCloseMs: number;
  maxBatchRecords: number;
  maxStreamsPerSession: number;
  logger: DevServerLogger;
  clock: () => number;
  wire: WireOptions;
  bootDelayMs: number;
}

export const DEFAULT_TRIM_DELAY_MS = 15_000;

export function generateSecretKey(): string {
  return `sk_dev_${randomBytes(18).toString('base64url')}`;
}

export function resolveOptions(
  options: DevServerOptions,
  defaultAgents: AnyAgent[],
): ResolvedDevServerOptions {
  return {
    agents: options.agents ?? defaultAgents,
    defaultAgent: options.defaultAgent,
    secretKey: options.secretKey ?? generateSecretKey(),
    pingIntervalMs: options.pingIntervalMs ?? PING_INTERVAL_MS,
    trimDelayMs: options.trimDelayMs ?? DEFAULT_TRIM_DELAY_MS,
    tokenTtlSeconds: options.tokenTtlSeconds ?? TOKEN_LIFETIME_SECONDS,
    idleTimeoutSeconds: options.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS,
    dataDir: options.dataDir,
    objectStore: options.objectStore ?? (options.dataDir === undefined ? 'memory' : { dir: options.dataDir }),
    peekCloseMs: options.peekCloseMs ?? 1000,
    maxBatchRecords: options.maxBatchRecords ?? 1000,
    maxStreamsPerSession: options.maxStreamsPerSession ?? 16,
    logger: options.logger ?? consoleLogger,
    clock: options.clock ?? Date.now,
    wire: {
      appendSeq: options.wire?.appendSeq ?? true,
      sessionInEventId: options.wire?.sessionInEventId ?? true,
    },
    bootDelayMs: options.bootDelayMs ?? 0,
  };
}
