import { afterEach, describe, expect, it } from 'vitest';
import { type DevServer, demoAgent, echoAgent, startDevServer } from '../../src/dev-server/index.js';
import { createSession, readOut, replyText, sendText, untilTurnCompletes } from './support/client.js';

let server: DevServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: { defaultAgent?: typeof echoAgent }): Promise<string[]> {
  const warnings: string[] = [];
  server = await startDevServer({
    port: 0,
    agents: [demoAgent, echoAgent],
    ...options,
    logger: { warn: (message) => warnings.push(message) },
  });
  return warnings;
}

describe('a task id the dev server has no agent for', () => {
  it('is answered by the default agent, said once in the log per task id', async () => {
    const warnings = await start({ defaultAgent: echoAgent });
    const target = server as DevServer;
    for (const chatId of ['first', 'second']) {
      const created = await createSession(target, { externalId: chatId, taskIdentifier: 'support-agent' });
      expect(created.status).toBe(201);
      expect(created.body.taskIdentifier).toBe('support-agent');
      const token = created.body.publicAccessToken;
      await sendText(target, chatId, token, chatId, 'hi');
      const read = await readOut(target, chatId, token, { until: untilTurnCompletes(1) });
      expect(replyText(read.records)).toBe('Echo: hi');
    }
    expect(warnings).toEqual([
      'no agent with id "support-agent" (served: demo, echo): the echo agent answers it',
    ]);
  });

  it('answers 404 without a default agent, and says why once in the log', async () => {
    const warnings = await start({});
    const target = server as DevServer;
    for (const chatId of ['first', 'second']) {
      const created = await createSession(target, { externalId: chatId, taskIdentifier: 'support-agent' });
      expect(created.status).toBe(404);
    }
    expect(warnings).toEqual([
      'no agent with id "support-agent" (served: demo, echo): its sessions answer 404',
    ]);
  });
});
