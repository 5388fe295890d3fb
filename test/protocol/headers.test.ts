import { describe, expect, it } from 'vitest';
import { CLIENT_HEADER, HEADER } from '../../src/protocol/headers.js';

describe('CLIENT_HEADER', () => {
  it('is the part of HEADER the browser client uses, name for name', () => {
    for (const [key, name] of Object.entries(CLIENT_HEADER)) {
      expect(HEADER[key as keyof typeof HEADER]).toBe(name);
    }
    expect(Object.keys(HEADER).slice(0, Object.keys(CLIENT_HEADER).length)).toEqual(
      Object.keys(CLIENT_HEADER),
    );
  });
});
