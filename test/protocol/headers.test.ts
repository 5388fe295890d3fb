import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CLIENT_HEADER, HEADER } from '../../src/protocol/headers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('CLIENT_HEADER', () => {
  it('is the part of HEADER the browser client uses, name for name', () => {
    expect(Object.entries(HEADER).slice(0, Object.keys(CLIENT_HEADER).length)).toEqual(
      Object.entries(CLIENT_HEADER),
    );
  });

  it('keeps the server-only names out of what an app bundles for the client', async () => {
    const result = await build({
      stdin: {
        contents:
          "export { SessionChatTransport, createRouteSessionCallbacks } from './src/index.ts';\n" +
          "export { useChatSession } from './src/react/index.ts';\n",
        resolveDir: root,
        loader: 'ts',
      },
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      external: ['ai', 'react', 'react-dom', 'react/jsx-runtime', '@ai-sdk/react'],
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).toContain(CLIENT_HEADER.partId);
    // What only a server sends or reads (the rate-limit names the client reads from a 429 itself).
    for (const name of [HEADER.streamVersion, HEADER.triggerJwt, HEADER.triggerJwtClaims]) {
      expect(code).not.toContain(name);
    }
  });
});
