import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { readTokenClaims, runIdFromScopes, tokenExpiresAt } from '../../src/protocol/index.js';

const key = new TextEncoder().encode('test-only-signing-key-of-32-bytes!!');
const base64Url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const unsigned = (payload: string) => `${base64Url('{"alg":"HS256"}')}.${base64Url(payload)}.signature`;

describe('readTokenClaims', () => {
  it('reads sub, exp, iat and scopes of a real signed JWT without verifying it', async () => {
    const token = await new SignJWT({
      scopes: ['read:sessions:chat-1', 'write:sessions:chat-1', 'read:runs:run_abc'],
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('env_1')
      .setIssuedAt(1_760_000_000)
      .setExpirationTime(1_760_003_600)
      .sign(key);
    expect(readTokenClaims(token)).toEqual({
      sub: 'env_1',
      iat: 1_760_000_000,
      exp: 1_760_003_600,
      scopes: ['read:sessions:chat-1', 'write:sessions:chat-1', 'read:runs:run_abc'],
    });
    expect(tokenExpiresAt(token)).toBe(1_760_003_600_000);
  });

  it('decodes base64url payloads that need - and _ and no padding, and UTF-8 text', () => {
    // '?>' and '~' encode to '_' and '-' style characters in base64url.
    const payload = JSON.stringify({ sub: 'é😀?>>~~~', scopes: ['read:runs:run_1'] });
    const token = unsigned(payload);
    expect(token.split('.')[1]).toMatch(/[-_]/);
    expect(readTokenClaims(token)).toEqual({ sub: 'é😀?>>~~~', scopes: ['read:runs:run_1'] });
  });

  it('keeps only claims of the right type', () => {
    const token = unsigned(
      JSON.stringify({ sub: 5, exp: '1760000000', iat: null, scopes: ['a', 1, null, 'b'] }),
    );
    expect(readTokenClaims(token)).toEqual({ scopes: ['a', 'b'] });
    expect(tokenExpiresAt(token)).toBeUndefined();
    expect(readTokenClaims(unsigned(JSON.stringify({ scopes: 'read:runs:run_1' })))).toEqual({});
  });

  it.each([
    ['an empty string', ''],
    ['an opaque API key', 'tr_dev_1234567890'],
    ['two segments', 'aaa.bbb'],
    ['four segments', 'a.b.c.d'],
    ['a payload that is not base64', 'aaa.!!!.ccc'],
    ['a payload that is not JSON', `aaa.${base64Url('not json')}.ccc`],
    ['a JSON null payload', `aaa.${base64Url('null')}.ccc`],
    ['a JSON number payload', `aaa.${base64Url('42')}.ccc`],
    ['a JSON string payload', `aaa.${base64Url('"x"')}.ccc`],
    ['a JSON array payload', `aaa.${base64Url('[{"exp":1}]')}.ccc`],
  ])('returns undefined for %s', (_name, token) => {
    expect(readTokenClaims(token)).toBeUndefined();
    expect(tokenExpiresAt(token)).toBeUndefined();
  });
});

describe('runIdFromScopes', () => {
  it('finds the run id in the read:runs scope', () => {
    expect(runIdFromScopes(['read:sessions:chat-1', 'read:runs:run_abc', 'write:sessions:chat-1'])).toBe(
      'run_abc',
    );
  });

  it('takes the first read:runs scope when there are several', () => {
    expect(runIdFromScopes(['read:runs:run_1', 'read:runs:run_2'])).toBe('run_1');
  });

  it.each([
    ['no scopes', undefined],
    ['an empty list', []],
    ['only session scopes', ['read:sessions:c', 'write:sessions:c']],
    ['a write scope on the run', ['write:inputStreams:run_1']],
    ['the bare read:runs super-scope', ['read:runs']],
    ['an empty run id', ['read:runs:']],
  ])('returns undefined for %s', (_name, scopes) => {
    expect(runIdFromScopes(scopes)).toBeUndefined();
  });
});
