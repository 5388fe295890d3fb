import { describe, expect, it } from 'vitest';
import { TokenRedactor } from '../../src/devtools/token-redactor.js';

function jwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(payload)}.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg`;
}

const TOKEN = jwt({ exp: 2_000_000_000, scopes: ['read:sessions:chat-1', 'read:runs:run_1'] });
const BODY = `id: 7\ndata: {"headers":[["trigger-control","turn-complete"],["public-access-token","${TOKEN}"]]}\n\n`;

describe('TokenRedactor', () => {
  it('replaces a token split across two reads at every position, keeping the piece boundaries', () => {
    const start = BODY.indexOf(TOKEN);
    for (let cut = 0; cut <= BODY.length; cut++) {
      const redactor = new TokenRedactor();
      const pieces = [BODY.slice(0, cut), BODY.slice(cut)];
      const out = redactor.redactPieces(pieces, 1_000);
      const joined = out.join('');
      expect(joined, `cut at ${cut}`).toBe(BODY.replace(TOKEN, '[redacted-token:1]'));
      expect(out).toHaveLength(2);
      // Nothing of the token in any piece; the text outside it stays where it was.
      for (const piece of out) expect(piece).not.toContain(TOKEN.slice(0, 20));
      if (cut <= start) expect(out[0]).toBe(BODY.slice(0, cut));
      if (cut >= start + TOKEN.length) expect(out[1]).toBe(BODY.slice(cut));
    }
  });

  it('gives the same token the same number, and keeps only its scopes and time left', () => {
    const redactor = new TokenRedactor();
    const other = jwt({ exp: 2_000_000_100, scopes: ['read:sessions:chat-1'] });
    const text = redactor.redact(`Bearer ${TOKEN} then ${other} then ${TOKEN}`, 1_999_999_000_000);
    expect(text).toBe('Bearer [redacted-token:1] then [redacted-token:2] then [redacted-token:1]');
    expect(redactor.tokens).toEqual([
      { id: 1, expiresInMs: 1_000_000, scopes: ['read:sessions:chat-1', 'read:runs:run_1'] },
      { id: 2, expiresInMs: 1_100_000, scopes: ['read:sessions:chat-1'] },
    ]);
  });

  it('replaces a token across many one-character reads', () => {
    const redactor = new TokenRedactor();
    const out = redactor.redactPieces([...BODY], 0);
    expect(out.join('')).toBe(BODY.replace(TOKEN, '[redacted-token:1]'));
    expect(out).toHaveLength(BODY.length);
  });
});
