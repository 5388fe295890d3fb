import { type RecordedToken, redactedTokenPlaceholder } from '../protocol/recording.js';
import { readTokenClaims } from '../protocol/token-claims.js';

/** A JWT as tokens travel: three base64url segments, the first a JSON object (`eyJ`). */
const JWT = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/**
 * Replaces every token in recorded text with a numbered placeholder (the same token, the same
 * number) and keeps what each said about itself, never the token.
 */
export class TokenRedactor {
  private readonly ids = new Map<string, number>();
  readonly tokens: RecordedToken[] = [];

  /** The placeholder id of `token`, noting its claims the first time (`seenAt`: epoch ms). */
  idOf(token: string, seenAt: number): number {
    let id = this.ids.get(token);
    if (id === undefined) {
      id = this.tokens.length + 1;
      this.ids.set(token, id);
      const claims = readTokenClaims(token);
      this.tokens.push({
        id,
        expiresInMs: claims?.exp === undefined ? undefined : claims.exp * 1000 - seenAt,
        scopes: claims?.scopes,
      });
    }
    return id;
  }

  redact(text: string, seenAt: number): string {
    return text.replace(JWT, (token) => redactedTokenPlaceholder(this.idOf(token, seenAt)));
  }

  /**
   * Redacts a body that arrived in pieces, keeping its piece boundaries: a token split across
   * two pieces is replaced as a whole, in the piece where it began.
   */
  redactPieces(pieces: readonly string[], seenAt: number): string[] {
    const whole = pieces.join('');
    const matches = [...whole.matchAll(JWT)];
    if (matches.length === 0) return [...pieces];
    const out: string[] = [];
    let offset = 0;
    let skipUntil = 0;
    for (const piece of pieces) {
      const start = offset;
      const end = offset + piece.length;
      offset = end;
      let text = '';
      let cursor = Math.max(start, skipUntil);
      for (const match of matches) {
        const matchStart = match.index;
        const matchEnd = matchStart + match[0].length;
        if (matchStart < cursor || matchStart >= end) continue;
        text += whole.slice(cursor, matchStart) + redactedTokenPlaceholder(this.idOf(match[0], seenAt));
        cursor = matchEnd;
      }
      if (cursor < end) text += whole.slice(cursor, end);
      skipUntil = Math.max(skipUntil, cursor);
      out.push(text);
    }
    return out;
  }
}
