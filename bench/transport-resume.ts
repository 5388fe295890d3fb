/**
 * Time from a dropped `.out` connection to the next chunk, through `SessionChatTransport`
 * against the dev server over loopback. Run: `npx tsx bench/transport-resume.ts`.
 *
 * Each turn streams deltas every 20 ms; the server cuts the connection after a few records
 * (abruptly, no `[DONE]`). The client's `stream-resumed` event reports the downtime from
 * noticing the drop to the first new record; the wall-clock gap between the last chunk
 * before the drop and the first one after it is measured too (it includes the agent's
 * 20 ms pacing). The reply must still be complete and exact, or the run fails.
 *
 * Imports the public entries' source (not dist) so the figure is for the code in this tree.
 */
import type { UIMessageChunk } from 'ai';
import { echoAgent, startDevServer } from '../src/dev-server/index.js';
import { SessionChatTransport, type SessionEvent } from '../src/index.js';

const TURNS = 30;
const DELAY_MS = 20;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const server = await startDevServer({
    port: 0,
    agents: [echoAgent],
    logger: { warn: () => {} },
    trimDelayMs: 60_000,
  });
  const downtimes: number[] = [];
  const gaps: number[] = [];
  const events: SessionEvent[] = [];
  const transport = new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    clientData: { delayMs: DELAY_MS },
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'stream-resumed') downtimes.push(event.downtimeMs);
    },
    startSession: async ({ chatId, taskIdentifier, clientData }) => {
      const response = await fetch(`${server.url}/api/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.secretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'chat.agent',
          taskIdentifier,
          externalId: chatId,
          triggerConfig: { basePayload: { chatId, trigger: 'preload', metadata: clientData } },
        }),
      });
      const body = (await response.json()) as { publicAccessToken: string; id: string };
      return { publicAccessToken: body.publicAccessToken, sessionId: body.id };
    },
  });
  const text = 'measure the time it takes to heal a dropped stream';
  const expected = `Echo: ${text}`;
  for (let turn = 0; turn < TURNS; turn++) {
    server.faults.dropOutAfter(3 + (turn % 3));
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'resume-bench',
      messageId: undefined,
      messages: [{ id: `u${turn}`, role: 'user', parts: [{ type: 'text', text }] }],
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    let reply = '';
    let last = performance.now();
    let dropsBefore = events.filter((event) => event.type === 'stream-reconnecting').length;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const now = performance.now();
      const drops = events.filter((event) => event.type === 'stream-reconnecting').length;
      if (drops > dropsBefore) {
        gaps.push(now - last);
        dropsBefore = drops;
      }
      last = now;
      const chunk = value as UIMessageChunk;
      if (chunk.type === 'text-delta') reply += chunk.delta;
    }
    if (reply !== expected) throw new Error(`turn ${turn}: got "${reply}", expected "${expected}"`);
  }
  transport.close();
  await server.close();
  console.log(`${TURNS} turns, one drop each (loopback, dev server in-process, deltas every ${DELAY_MS} ms)`);
  console.log(
    `drop noticed -> next record: median ${percentile(downtimes, 50).toFixed(1)} ms, p95 ${percentile(downtimes, 95).toFixed(1)} ms, max ${Math.max(...downtimes).toFixed(1)} ms (target < 150 ms)`,
  );
  console.log(
    `last chunk before drop -> first chunk after: median ${percentile(gaps, 50).toFixed(1)} ms, p95 ${percentile(gaps, 95).toFixed(1)} ms (includes the ${DELAY_MS} ms pacing)`,
  );
}

await main();
