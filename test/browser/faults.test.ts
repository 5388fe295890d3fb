import { describe, expect, it } from 'vitest';
import type { ChatPage } from './support/chat-page.js';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';

/** The long reply arrived whole: its opening once, its ending present, no extra message. */
async function expectLongReplyOnce(chat: ChatPage, assistantMessages = 1): Promise<void> {
  await chat.waitForReplyContaining(DEMO.long.ending, 60_000);
  await chat.waitForIdle();
  expect(await chat.assistantMessages.count()).toBe(assistantMessages);
  const reply = await chat.lastReply();
  expect(reply.split(DEMO.long.opening).length - 1).toBe(1);
  expect(reply.length).toBeGreaterThanOrEqual(DEMO.long.minimumLength);
}

describe('fault buttons in Chromium: the chat recovers', () => {
  const playground = usePlayground();

  it('drop connection mid-reply: the stream resumes from its cursor, nothing lost or repeated', async () => {
    const chat = await playground.openChat('fault-drop-connection');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(20);
    await chat.injectFault('drop-connection');
    expect(await chat.page.getByTestId('event-log').textContent()).toMatch(
      /dropped [1-9]\d* open \.out connection/,
    );
    await chat.waitForLog('stream-reconnecting');
    await expectLongReplyOnce(chat);
    await chat.waitForLog('stream-resumed');
    expect(await chat.page.locator('[data-testid="status-badge"]').getAttribute('data-state')).not.toBe(
      'error',
    );
  });

  it('expire token: the next send gets a fresh token and goes through', async () => {
    const chat = await playground.openChat('fault-expire-token');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    const refreshedBefore = await chat.logCount('token-refreshed');
    await chat.injectFault('expire-token');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForBusy();
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(2);
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
    expect(await chat.logCount('token-refreshed')).toBeGreaterThan(refreshedBefore);
    expect(await chat.page.getByTestId('chat-error').count()).toBe(0);
  });

  it('expire token and drop mid-reply: the reconnect refreshes the token and resumes', async () => {
    const chat = await playground.openChat('fault-expire-and-drop');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(20);
    await chat.injectFault('expire-token');
    await chat.injectFault('drop-connection');
    await expectLongReplyOnce(chat);
    expect(await chat.logCount('token-refreshed')).toBeGreaterThan(0);
  });

  it('crash run: the session outlives its run; the next message boots a new run with the history', async () => {
    const chat = await playground.openChat('fault-crash-run');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    const firstRun = await chat.page.getByTestId('run-id').textContent();
    expect(firstRun).toMatch(/^run_/);
    await chat.injectFault('crash-run');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(1);
    // The run died mid-reply: nothing more arrives for this turn.
    await chat.page.waitForTimeout(1500);
    const partial = await chat.lastReply();
    await chat.page.waitForTimeout(1000);
    expect(await chat.lastReply()).toBe(partial);
    expect(partial).not.toContain(DEMO.long.ending);
    // The visitor stops the dead turn and carries on: a continuation run answers, and
    // it knows the whole conversation (2 turns, the second cut short, plus the new message).
    await chat.page.getByTestId('stop').click();
    await chat.waitForIdle(10_000);
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForBusy();
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(3);
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
    const status = chat.page.locator('[data-testid="data-part"][data-type="data-status"]').last();
    expect(JSON.parse((await status.locator('code').textContent()) ?? '')).toMatchObject({ messages: 5 });
    expect(await chat.page.getByTestId('run-id').textContent()).not.toBe(firstRun);
  });
});
