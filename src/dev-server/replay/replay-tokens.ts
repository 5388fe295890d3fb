import { REDACTED_TOKEN, type RecordedToken } from '../../protocol/recording.js';

const DEFAULT_LIFETIME_MS = 60 * 60 * 1000;

function base64Url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/**
 * Stand-ins for a recording's redacted tokens: one unsigned JWT per placeholder, minted on
 * first use with the recorded scopes (the run id lives there) and the time it had left then,
 * so the client refreshes when the recorded one did. A replay checks no token.
 */
export class ReplayTokens {
  private readonly minted = new Map<number, string>();
  private readonly facts = new Map<number, RecordedToken>();

  constructor(tokens: readonly RecordedToken[]) {
    for (const token of tokens) this.facts.set(token.id, token);
  }

  mint(id: number | undefined): string {
    const key = id ?? 0;
    let token = this.minted.get(key);
    if (token === undefined) {
      const facts = this.facts.get(key);
      const expiresAt = Date.now() + (facts?.expiresInMs ?? DEFAULT_LIFETIME_MS);
      const payload = { exp: Math.floor(expiresAt / 1000), scopes: facts?.scopes ?? [], replay: key };
      token = `${base64Url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64Url(JSON.stringify(payload))}.`;
      this.minted.set(key, token);
    }
    return token;
  }

  /** `text` with every placeholder replaced by its stand-in. */
  fill(text: string): string {
    return text.replace(REDACTED_TOKEN, (_match, id: string) => this.mint(Number(id)));
  }
}
