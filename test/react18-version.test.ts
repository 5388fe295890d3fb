import { version } from 'react';
import { describe, expect, it } from 'vitest';

// Runs only in the React 18 pass of .ci/run: proves the React suites there really see React 18.
describe.runIf(process.env.DURABLE_CHAT_REACT === '18')('React under test', () => {
  it('is React 18', () => {
    expect(version.startsWith('18.')).toBe(true);
  });
});
