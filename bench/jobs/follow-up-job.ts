import type { UIMessage, UIMessageChunk } from 'ai';
import { DurableChatError } from 'durable-chat';
import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { chatIdFor, expectedReply, followUpTurn, type TurnSpec } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks } from '../verify-turn.js';

export interface FollowUpJob {
  kind: 'follow-up';
  variant: VariantName;
  baseUrl: string;
  /** The shape of every turn; the server streams turn n of a chat on its n-th append. */
  fixtureTurn: TurnSpec;
  /** Turns per chat (3: turn 1 and turn 3 are what the scenario reports). */
  turns: number;
  /** Untimed pause between a turn's end and the next send (the user reading, then typing). */
  pauseMs: number;
  /** Whole chats run first and thrown away (the JIT, the connection pool). */
  warmups: number;
  /** Measured chats. */
  runs: number;
}

export interface FollowUpResult {
  /** `firstChunkMs[turn - 1][run]`: ms from the send call to that turn's first text-delta. */
  firstChunkMs: number[][];
}

function invalid(message: string): DurableChatError {
  return new DurableChatError({ code: 'UNEXPECTED_RESPONSE', message });
}

/**
 * Follow-up turns as `useChat` meets them: one chat (session created untimed, as an app's
 * server would), `turns` sends one after the other with the whole history, each reply read
 * to its end and checked exactly against that turn's own text before its time counts.
 */
export async function runFollowUpJob(job: FollowUpJob): Promise<FollowUpResult> {
  const variant = await loadVariant(job.variant, { followUps: true });
  const firstChunkMs: number[][] = Array.from({ length: job.turns }, () => []);
  for (let run = -job.warmups; run < job.runs; run++) {
    const chatId = chatIdFor(job.fixtureTurn.name, `${job.variant}-${process.pid}-${run + job.warmups}`);
    const session = await createSession(job.baseUrl, chatId);
    const history: UIMessage[] = [];
    for (let turn = 1; turn <= job.turns; turn++) {
      if (turn > 1) await new Promise((resolve) => setTimeout(resolve, job.pauseMs));
      const message = userMessage(`bench prompt ${run + job.warmups}, turn ${turn}`);
      const context = {
        baseUrl: job.baseUrl,
        chatId,
        token: session.publicAccessToken,
        isCached: session.isCached,
        message,
        history: [...history],
      };
      const collector = createCollector();
      let first: number | undefined;
      const started = performance.now();
      const add = (chunk: UIMessageChunk) => {
        if (first === undefined && chunk.type === 'text-delta') first = performance.now();
        collector.add(chunk);
      };
      await drain(await variant.send(context), { add });
      if (first === undefined) throw invalid(`${job.variant}: turn ${turn}'s reply had no text-delta`);
      const expected = expectedReply(followUpTurn(job.fixtureTurn, turn));
      verifyChunks(`${job.variant}/follow-up turn ${turn}`, expected, collector);
      if (run >= 0) firstChunkMs[turn - 1]?.push(first - started);
      history.push(message, {
        id: `assistant-${turn}`,
        role: 'assistant',
        parts: [{ type: 'text', text: expected.text }],
      });
    }
  }
  variant.dispose?.();
  return { firstChunkMs };
}
