import * as ai from 'ai';
import { describe, expect, it } from 'vitest';

// Proves each vitest project really runs on the AI SDK major it is named after: `ai` as
// the code under test sees it (after the ai7 project's alias), not as node resolves it.
describe('AI SDK major under test', () => {
  it('matches the project name', () => {
    const project = (globalThis as { __vitest_worker__?: { ctx?: { projectName?: string } } })
      .__vitest_worker__?.ctx?.projectName;
    const exports = Object.keys(ai);
    const isSeven =
      exports.includes('WebSocketChatTransport') && !exports.includes('isToolOrDynamicToolUIPart');
    expect(project === 'ai7' ? 'seven' : 'six').toBe(isSeven ? 'seven' : 'six');
    expect(typeof ai.readUIMessageStream).toBe('function');
  });
});
