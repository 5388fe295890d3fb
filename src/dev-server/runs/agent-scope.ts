import { AsyncLocalStorage } from 'node:async_hooks';

/** What a run offers to the process-wide guard: a rejection its agent code left unhandled. */
export interface AgentScope {
  failFromUnhandled(reason: unknown): void;
}

const scopes = new AsyncLocalStorage<AgentScope>();
let installed = false;

/**
 * Runs `body` (a run's agent code, and everything it schedules) so that a promise it leaves
 * rejected and unhandled fails that run's turn instead of Node's default: ending the whole
 * server process, every other session with it.
 */
export function runInAgentScope<T>(scope: AgentScope, body: () => T): T {
  installGuard();
  return scopes.run(scope, body);
}

function installGuard(): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', onUnhandledRejection);
}

function onUnhandledRejection(reason: unknown): void {
  const scope = scopes.getStore();
  if (scope !== undefined) {
    scope.failFromUnhandled(reason);
    return;
  }
  // Not the agents': keep Node's default (an uncaught exception) unless the host handles these.
  if (process.listenerCount('unhandledRejection') === 1) {
    throw reason instanceof Error ? reason : new Error(`unhandled rejection: ${String(reason)}`);
  }
}
