import type { AnyAgent } from './agents/define-agent.js';
import type { DevServerLogger } from './logger.js';

/**
 * Finds the agent a create call's `taskIdentifier` names, or the default agent for an id
 * the server does not know. Each unknown id is logged once, so a user whose app names its
 * production task sees why the dev server answers (or does not) without a flood per chat.
 */
export function createAgentLookup(
  agents: ReadonlyMap<string, AnyAgent>,
  defaultAgent: AnyAgent | undefined,
  logger: DevServerLogger,
): (taskIdentifier: string) => AnyAgent | undefined {
  const reported = new Set<string>();
  const served = [...agents.keys()].join(', ');
  return (taskIdentifier) => {
    const agent = agents.get(taskIdentifier);
    if (agent !== undefined) return agent;
    if (!reported.has(taskIdentifier)) {
      reported.add(taskIdentifier);
      logger.warn(
        defaultAgent === undefined
          ? `no agent with id "${taskIdentifier}" (served: ${served}): its sessions answer 404`
          : `no agent with id "${taskIdentifier}" (served: ${served}): the ${defaultAgent.id} agent answers it`,
      );
    }
    return defaultAgent;
  };
}
