import { describe, expect, it } from 'vitest';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';

describe('playground chat in Chromium', () => {
  const playground = usePlayground();

  it('sends a message and streams a markdown reply', async () => {
    const chat = await playground.openChat('send-and-stream');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForBusy();
    await chat.waitForIdle();
    expect(await chat.userMessages.count()).toBe(1);
    expect(await chat.assistantMessages.count()).toBe(1);
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
    // Rendered as markdown, not shown as raw asterisks.
    const markdown = chat.assistantMessages.first().locator('.markdown');
    expect(await markdown.locator('strong, li, code, h3, h4').count()).toBeGreaterThan(0);
    expect(await chat.lastReply()).not.toContain('**');
    // The meter saw the stream.
    expect(Number(await chat.page.getByTestId('metric-chunks').textContent())).toBeGreaterThan(3);
    expect(await chat.page.getByTestId('metric-ttfc').textContent()).toMatch(/^\d+ ms$/);
    // The sidebar names the chat after its first message.
    const active = chat.page.locator('[data-testid="chat-list"] button[aria-current="true"]');
    expect(await active.textContent()).toBe(DEMO.markdown.prompt.slice(0, 40));
  });

  it('stop ends the reply for good, and the chat goes on', async () => {
    const chat = await playground.openChat('stop');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(20);
    await chat.page.getByTestId('stop').click();
    await chat.waitForIdle(10_000);
    await chat.waitForLog('message-sent');
    const logText = await chat.page.getByTestId('event-log').textContent();
    expect(logText).toMatch(/message-sent stop/);
    const stopped = await chat.lastReply();
    expect(stopped.length).toBeGreaterThan(0);
    expect(stopped.length).toBeLessThan(DEMO.long.minimumLength);
    // Nothing more arrives for the stopped turn.
    await chat.page.waitForTimeout(1500);
    expect(await chat.lastReply()).toBe(stopped);
    // The session is idle, not broken: the next message gets its own reply.
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForBusy();
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(2);
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
  });

  it('regenerate replaces the last reply instead of adding one', async () => {
    const chat = await playground.openChat('regenerate');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForBusy();
    await chat.waitForIdle();
    await chat.page.getByTestId('regenerate').click();
    await chat.waitForBusy();
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(1);
    expect(await chat.lastReply()).toContain(DEMO.markdown.contains);
    expect(await chat.page.getByTestId('event-log').textContent()).toMatch(/message-sent regenerate/);
  });

  it('tool approval: approve runs the tool, deny cancels it', async () => {
    const chat = await playground.openChat('approval');
    await chat.send(DEMO.approval.prompt);
    const tool = chat.page.locator('[data-testid="tool-part"][data-state="approval-requested"]');
    await tool.waitFor();
    await chat.waitForIdle();
    await tool.getByTestId('approve').click();
    await chat.page.locator('[data-testid="tool-part"][data-state="output-available"]').waitFor();
    await chat.waitForIdle();
    expect(await chat.lastReply()).toContain(DEMO.approval.approvedText);
    // Approvals continue the same assistant message.
    expect(await chat.assistantMessages.count()).toBe(1);

    await chat.send(DEMO.approval.prompt);
    const second = chat.page.locator('[data-testid="tool-part"][data-state="approval-requested"]');
    await second.waitFor();
    await chat.waitForIdle();
    await second.getByTestId('deny').click();
    await chat.page.locator('[data-testid="tool-part"][data-state="output-denied"]').waitFor();
    await chat.waitForIdle();
    expect(await chat.lastReply()).toContain(DEMO.approval.deniedText);
  });

  it('a tool whose output the user supplies: pick an option, or type one', async () => {
    const chat = await playground.openChat('user-tool-output');
    await chat.send(DEMO.askUser.prompt);
    await chat.page.locator('[data-testid="tool-part"][data-state="input-available"]').waitFor();
    await chat.waitForIdle();
    await chat.page.getByTestId('tool-option').filter({ hasText: DEMO.askUser.option }).click();
    await chat.page.locator('[data-testid="tool-part"][data-state="output-available"]').waitFor();
    await chat.waitForReplyContaining(`You chose ${DEMO.askUser.option}`);
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(1);

    await chat.send(DEMO.askUser.prompt);
    await chat.page.locator('[data-testid="tool-part"][data-state="input-available"]').waitFor();
    await chat.waitForIdle();
    await chat.page.getByTestId('tool-output-input').fill(DEMO.askUser.typed);
    await chat.page.getByTestId('tool-output-submit').click();
    await chat.waitForReplyContaining(`You chose ${DEMO.askUser.typed}`);
    await chat.waitForIdle();
    expect(await chat.assistantMessages.count()).toBe(2);
  });

  it('shows the custom data parts the agent writes', async () => {
    const chat = await playground.openChat('data-parts');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    const part = chat.page.locator(`[data-testid="data-part"][data-type="${DEMO.dataPartType}"]`);
    expect(await part.count()).toBeGreaterThan(0);
  });

  it('keeps several chats: new, switch, and each keeps its history', async () => {
    const chat = await playground.openChat('several-chats');
    const first = await chat.page
      .locator('[data-testid="chat-list"] button[aria-current="true"]')
      .getAttribute('data-chat-id');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    const second = await chat.newChat();
    expect(second).not.toBe(first);
    expect(await chat.assistantMessages.count()).toBe(0);
    await chat.send(DEMO.approval.prompt);
    await chat.page.locator('[data-testid="tool-part"]').waitFor();
    await chat.waitForIdle();
    if (first === null) throw new Error('the first chat has no id');
    await chat.selectChat(first);
    await chat.waitForReplyContaining(DEMO.markdown.contains);
    expect(await chat.userMessages.textContent()).toContain(DEMO.markdown.prompt);
    await chat.selectChat(second);
    await chat.page.locator('[data-testid="tool-part"]').waitFor();
  });

  it('reload mid-reply: the reply completes, exactly once', async () => {
    const chat = await playground.openChat('reload-mid-reply');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(20);
    await chat.page.reload();
    await chat.ready();
    await chat.waitForReplyLength(DEMO.long.minimumLength, 60_000);
    await chat.waitForIdle();
    expect(await chat.userMessages.count()).toBe(1);
    expect(await chat.assistantMessages.count()).toBe(1);
    const reply = await chat.lastReply();
    // Exactly once: the opening line is not repeated, nothing is lost at the end.
    expect(reply.split(DEMO.long.opening).length - 1).toBe(1);
    expect(reply).toContain(DEMO.long.ending);
    // This page (the log starts empty on load) reconnected to the live turn.
    expect(await chat.logCount('stream-connected')).toBeGreaterThan(0);
  });

  it('stop after a reload stops the turn this page did not start', async () => {
    const chat = await playground.openChat('stop-after-reload');
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(20);
    await chat.page.reload();
    await chat.ready();
    await chat.waitForBusy();
    await chat.page.getByTestId('stop').click();
    await chat.waitForIdle(10_000);
    const stopped = await chat.lastReply();
    await chat.page.waitForTimeout(1500);
    expect(await chat.lastReply()).toBe(stopped);
    expect(stopped).not.toContain(DEMO.long.ending);
    expect(await chat.page.getByTestId('event-log').textContent()).toMatch(/message-sent stop/);
  });

  it('close session: the badge says closed and sending is refused', async () => {
    const chat = await playground.openChat('close-session');
    await chat.send(DEMO.markdown.prompt);
    await chat.waitForIdle();
    await chat.page.getByTestId('close-session').click();
    await chat.page.locator('[data-testid="status-badge"][data-state="closed"]').waitFor();
    expect(await chat.page.getByTestId('composer').isDisabled()).toBe(true);
    const entry = chat.page.locator('[data-testid="chat-list"] button[aria-current="true"]');
    expect(await entry.getAttribute('class')).toContain('closed');
    // Still closed after a reload: closed is terminal.
    await chat.page.reload();
    await chat.ready();
    await chat.page.locator('[data-testid="status-badge"][data-state="closed"]').waitFor();
  });
});
