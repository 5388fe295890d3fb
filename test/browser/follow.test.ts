import { describe, expect, it } from 'vitest';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';

describe('playground: a follower view and a sub-agent call, in Chromium', () => {
  const playground = usePlayground();

  it('the follower pane (read-only watch token, its own connection) shows the reply live and ends with the same text', async () => {
    const chat = await playground.openChat('follower-view');
    await chat.page.getByTestId('follow-toggle').check();
    const follower = chat.page.getByTestId('follower-view');
    await follower.waitFor();
    await chat.send(DEMO.long.prompt);
    // Live on the follower while the owner still streams.
    await chat.page.locator('[data-testid="follower-view"][data-live="true"]').waitFor({ timeout: 30_000 });
    await chat.waitForIdle();
    await chat.page.locator('[data-testid="follower-view"][data-live="false"]').waitFor({ timeout: 30_000 });
    const main = chat.page.locator('[data-testid="messages"] [data-testid="message-assistant"] .markdown');
    const followed = follower.locator('[data-testid="message-assistant"] .markdown');
    expect(await followed.allTextContents()).toEqual(await main.allTextContents());
    expect((await followed.allTextContents()).join('')).toContain(DEMO.long.ending);
    expect(await follower.getByTestId('follower-phase').textContent()).toContain('following');
  });

  it('a research prompt shows the sub-agent reply under its tool call, in the chat and on the follower', async () => {
    const chat = await playground.openChat('subagent');
    await chat.page.getByTestId('follow-toggle').check();
    await chat.send('Research durable streams');
    await chat.waitForIdle();
    await chat.waitForReplyContaining('The research sub-agent reported back');
    const subagent = chat.page.locator('[data-testid="messages"] [data-testid="subagent"]');
    await chat.page
      .locator('[data-testid="messages"] [data-testid="subagent"][data-finished="true"]')
      .waitFor();
    expect(await subagent.count()).toBe(1);
    expect(await subagent.textContent()).toContain('Looking into "Research durable streams"');
    const followed = chat.page.locator(
      '[data-testid="follower-view"] [data-testid="subagent"][data-finished="true"]',
    );
    await followed.waitFor({ timeout: 30_000 });
    expect(await followed.getAttribute('data-batches')).toBe(await subagent.getAttribute('data-batches'));
  });
});
