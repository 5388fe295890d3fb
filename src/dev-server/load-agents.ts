import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ValidationError } from '../errors/validation-error.js';
import type { AnyAgent } from './agents/define-agent.js';

function isAgent(value: unknown): value is AnyAgent {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { id?: unknown }).id === 'string' &&
    typeof (value as { run?: unknown }).run === 'function'
  );
}

/**
 * Loads the agents a module exports: every export that is an agent, or arrays of them
 * (a `default` export of `[agentA, agentB]` works too).
 */
export async function loadAgents(modulePath: string, cwd = process.cwd()): Promise<AnyAgent[]> {
  const module = (await import(pathToFileURL(resolve(cwd, modulePath)).href)) as Record<string, unknown>;
  const agents = new Map<string, AnyAgent>();
  for (const value of Object.values(module)) {
    const candidates = Array.isArray(value) ? value : [value];
    for (const candidate of candidates) if (isAgent(candidate)) agents.set(candidate.id, candidate);
  }
  if (agents.size === 0) {
    throw new ValidationError({
      field: '--agents',
      message: `--agents: ${modulePath} exports no agent (an object with an \`id\` and a \`run\` function)`,
    });
  }
  return [...agents.values()];
}
