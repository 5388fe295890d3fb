import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevServer } from '../../src/dev-server/index.js';
import { DIVERGED_PREFIX } from '../../src/dev-server/runs/diverge-answer.js';
import { EXACT_POSITIONS } from '../../src/transport/emitted-log.js';
import { SessionChatTransport } from '../../src/transport/session-chat-transport.js';
import {
  recordingFetch,
  startEchoServer,
  startSessionVia,
  TestChat,
  transcript,
  uniqueChatId,
} from './support/dev-server-fixture.js';

/**
 * `upgrade-required` mid-turn, with a new run that answers differently (other text, other
 * part ids, another message id), as a real model would. Library defaults.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startEchoServer();
});
afterAll(async () => {
  await server.close();
});

function transport(fetcher?: typeof fetch, clientData?: unknown) {
  return new SessionChatTransport({
    baseURL: server.url,
    taskIdentifier: 'echo',
    startSession: startSessionVia(server),
    environment: { warn: () => {} },
    ...(fetcher === undefined ? {} : { fetch: fetcher }),
    ...(clientData === undefined ? {} : { clientData }),
  });
}

describe('upgrade mid-turn deep into a long answer', () => {
  it('a re-stream past the positions compared one by one drops every repeat (bounded log)', async () => {
    const chatId = uniqueChatId('upgrade-long');
    // 8 characters per delta: 64 KiB of answer is about 8,400 deltas per repeat, so the
    // upgrade lands past the exact positions, inside a block compared as a whole.
    const text = 'abcdefgh'.repeat(8192);
    const subject = transport(undefined, { repeat: 3 });
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport: subject, onError: (error) => errors.push(error) });
    server.faults.upgradeMidTurn({ afterChunks: EXACT_POSITIONS + 300, sessionId: chatId });
    await chat.sendMessage({ text });
    expect(errors).toEqual([]);
    const assistant = chat.messages[1] as UIMessage;
    const texts = assistant.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
    // The same answer re-streamed: shown once, nothing repeated, nothing lost.
    expect(texts).toEqual([`Echo: ${[text, text, text].join(' ')}`]);
    subject.close();
  });
});

describe('upgrade mid-turn with a new run that answers differently', () => {
  it('shows the cut partial once (closed off), then the new answer once, in one message', async () => {
    const chatId = uniqueChatId('upgrade-diverge');
    const subject = transport();
    const errors: unknown[] = [];
    const chat = new TestChat({ id: chatId, transport: subject, onError: (error) => errors.push(error) });
    server.faults.upgradeMidTurn({ afterChunks: 5, sessionId: chatId, differentAnswer: true });
    await chat.sendMessage({ text: 'tell me something long enough to cut' });
    expect(errors).toEqual([]);
    expect(chat.messages).toHaveLength(2);
    const assistant = chat.messages[1] as UIMessage;
    const texts = assistant.parts.flatMap((part) => (part.type === 'text' ? [part] : []));
    expect(texts).toHaveLength(2);
    const [cut, answer] = texts;
    const full = 'Echo: tell me something long enough to cut';
    // The partial the first run streamed, ended where it was cut.
    expect(full.startsWith(cut?.text ?? '?')).toBe(true);
    expect(cut?.text.length).toBeLessThan(full.length);
    expect(cut?.state).toBe('done');
    // The new run's answer, whole and once.
    expect(answer?.text).toBe(`${DIVERGED_PREFIX}${full}`);
    expect(answer?.state).toBe('done');
    subject.close();
  });

  it('a tool approval after the take-over goes under the message id the new run knows', async () => {
    const chatId = uniqueChatId('upgrade-approve');
    const recorder = recordingFetch();
    const subject = transport(recorder.fetch);
    const chat = new TestChat({
      id: chatId,
      transport: subject,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    server.faults.upgradeMidTurn({ afterChunks: 2, sessionId: chatId, differentAnswer: true });
    await chat.sendMessage({ text: '/approve ship it' });
    const part = chat.messages[1]?.parts.find((candidate) => candidate.type === 'tool-confirm') as
      | { state: string; approval?: { id: string } }
      | undefined;
    expect(part?.state).toBe('approval-requested');
    await chat.addToolApprovalResponse({ id: part?.approval?.id ?? '', approved: true });
    for (
      let wait = 0;
      wait < 200 && !transcript(chat.messages).some((line) => line.includes('Confirmed'));
      wait++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(transcript(chat.messages).at(-1)).toContain('Confirmed: ship it');
    const appended = recorder.requests
      .filter((request) => request.path.endsWith('/in/append'))
      .map((request) => JSON.parse(request.body ?? '{}') as { payload?: { message?: UIMessage } });
    const approval = appended[1]?.payload?.message;
    expect(approval?.role).toBe('assistant');
    expect(approval?.id).not.toBe(chat.messages[1]?.id); // the id the chat shows is the first run's
    subject.close();
  });
});
