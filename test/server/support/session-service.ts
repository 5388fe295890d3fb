import { stopChunk } from '../../../src/protocol/input-chunks.js';
import { serializeAppend } from '../../../src/protocol/validate.js';

/** A fetch that counts the requests it passes on to the real `fetch`. */
export function countingFetch(): { fetch: typeof fetch; count: () => number } {
  let requests = 0;
  return {
    fetch: (input, init) => {
      requests++;
      return fetch(input, init);
    },
    count: () => requests,
  };
}

/** Appends a stop chunk with the session token: proves the token really authorises `.in`. */
export async function appendWithToken(baseURL: string, chatId: string, token: string): Promise<Response> {
  return fetch(`${baseURL}/realtime/v1/sessions/${encodeURIComponent(chatId)}/in/append`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: serializeAppend(stopChunk()),
  });
}

/** Reads the row with the secret key (a dev-server extra the spec allows; tests only). */
export async function readRow(
  baseURL: string,
  secretKey: string,
  id: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseURL}/api/v1/sessions/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${secretKey}` },
  });
  if (!response.ok) throw new Error(`reading the session row failed with ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}
