import type { AnyAgent } from '../agents/define-agent.js';
import { type ValidationOutcome, validateWith } from '../agents/standard-schema.js';

/** Client data (`metadata`) against the agent's schema; without one it passes as sent. */
export async function validateClientData(
  agent: AnyAgent,
  metadata: unknown,
): Promise<ValidationOutcome<unknown>> {
  if (agent.clientDataSchema === undefined) return { ok: true, value: metadata };
  try {
    return await validateWith(agent.clientDataSchema, metadata);
  } catch (error) {
    return {
      ok: false,
      message: `client data schema threw: ${error instanceof Error ? error.message : 'unknown'}`,
    };
  }
}

/** An action needs an action schema: without one every action is rejected, as the spec says. */
export async function validateAction(agent: AnyAgent, action: unknown): Promise<ValidationOutcome<unknown>> {
  if (agent.actionSchema === undefined) return { ok: false, message: 'the agent registers no action schema' };
  try {
    return await validateWith(agent.actionSchema, action);
  } catch (error) {
    return {
      ok: false,
      message: `action schema threw: ${error instanceof Error ? error.message : 'unknown'}`,
    };
  }
}
