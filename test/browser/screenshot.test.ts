import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveScreenshot } from './support/browser.js';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';
import { repoRoot } from './support/playground-process.js';

// `UPDATE_DOCS_SCREENSHOT=1 npm run test:browser` refreshes docs/playground.png.
describe('playground screenshot', () => {
  const playground = usePlayground();

  it('captures the playground mid-conversation: a tool approved, a long reply streaming', async () => {
    const chat = await playground.openChat('screenshot');
    await chat.send(DEMO.approval.prompt);
    await chat.page.locator('[data-testid="tool-part"][data-state="approval-requested"]').waitFor();
    await chat.waitForIdle();
    await chat.page.getByTestId('approve').click();
    await chat.waitForReplyContaining(DEMO.approval.approvedText);
    await chat.waitForIdle();
    await chat.send(DEMO.long.prompt);
    await chat.waitForReplyLength(350);
    expect(await chat.page.getByTestId('stop').isVisible()).toBe(true);
    expect(await chat.page.getByTestId('status-badge').getAttribute('data-state')).toBe('streaming');
    const file = await saveScreenshot(chat.page, 'playground', { fullPage: false });
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1')
      copyFileSync(file, join(repoRoot, 'docs', 'playground.png'));
    await chat.waitForIdle();
  });
});
