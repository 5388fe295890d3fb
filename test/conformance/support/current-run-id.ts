import { expect } from 'vitest';
import { type ConformanceChat, createBody } from './conformance-chat.js';
import { sleep } from './suite-context.js';

/** `currentRunId` from the row a cached create returns, polled briefly until `accept` holds. */
export async function currentRunIdEventually(
  chat: ConformanceChat,
  accept: (runId: string | null) => boolean,
): Promise<string | null | undefined> {
  let runId: string | null | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    const response = await chat.client.createSession(createBody(chat.target, chat.externalId));
    expect(response.status, response.text).toBe(200);
    runId = response.body?.currentRunId as string | null | undefined;
    if (accept(runId ?? null)) return runId;
    await sleep(100);
  }
  return runId;
}
