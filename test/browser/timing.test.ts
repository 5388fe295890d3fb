import { describe, expect, it } from 'vitest';
import { DEMO } from './support/demo-prompts.js';
import { usePlayground } from './support/fixture.js';

const SAMPLES = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

describe('playground timing in Chromium', () => {
  const playground = usePlayground();

  it('page load to the first streamed token (printed, not asserted against a target)', async () => {
    const fromLoad: number[] = [];
    const fromSend: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const chat = await playground.openChat(`timing-${sample}`);
      // A fresh navigation: the clock starts at navigation start (performance.now() === 0).
      await chat.page.reload();
      await chat.ready();
      await chat.send(DEMO.markdown.prompt);
      const ttft = chat.page.getByTestId('metric-ttft');
      await chat.page.waitForFunction(() =>
        document.querySelector('[data-testid="metric-ttft"]')?.getAttribute('data-at'),
      );
      fromLoad.push(Number(await ttft.getAttribute('data-at')));
      fromSend.push(Number.parseInt((await ttft.textContent()) ?? '', 10));
      await chat.waitForIdle();
    }
    for (const value of [...fromLoad, ...fromSend]) expect(Number.isFinite(value)).toBe(true);
    console.log(
      `[timing] page load → first streamed token: median ${Math.round(median(fromLoad))} ms ` +
        `(samples ${fromLoad.map(Math.round).join(', ')}); send → first token: median ` +
        `${Math.round(median(fromSend))} ms (samples ${fromSend.join(', ')})`,
    );
  });
});
