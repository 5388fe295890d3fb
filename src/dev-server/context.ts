import type { AnyAgent } from './agents/define-agent.js';
import type { Faults } from './faults.js';
import type { DevServerLogger } from './logger.js';
import type { ResolvedDevServerOptions } from './options.js';
import type { ObjectStore } from './store/object-store.js';
import type { SessionRegistry } from './store/session-registry.js';
import type { TokenService } from './tokens.js';

/** Everything a request handler or a run needs, created once per server. */
export interface DevServerContext {
  readonly options: ResolvedDevServerOptions;
  readonly agents: ReadonlyMap<string, AnyAgent>;
  /** The agent serving a task id: its own, else the default agent (logged once), else none. */
  readonly agentFor: (taskIdentifier: string) => AnyAgent | undefined;
  readonly sessions: SessionRegistry;
  readonly tokens: TokenService;
  readonly faults: Faults;
  readonly objectStore: ObjectStore;
  /** Mutable at runtime through `faults.setTrimDelay`. */
  readonly trim: { delayMs: number };
  readonly logger: DevServerLogger;
  /** Open `.out` streams, ended when the app is disposed. */
  readonly streams: Set<{ end(): void }>;
}
