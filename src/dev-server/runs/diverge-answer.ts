import type { UIMessageChunk } from 'ai';

/** Said first by a new run that answers a turn again after an upgrade fault. */
export const DIVERGED_PREFIX = 'On second thought: ';

type PartChunk = Extract<UIMessageChunk, { id: string }>;

function hasPartId(chunk: UIMessageChunk): chunk is PartChunk {
  return (
    chunk.type === 'text-start' ||
    chunk.type === 'text-delta' ||
    chunk.type === 'text-end' ||
    chunk.type === 'reasoning-start' ||
    chunk.type === 'reasoning-delta' ||
    chunk.type === 'reasoning-end'
  );
}

/**
 * Fault injection: a real model asked the same question twice answers differently. The
 * answer gets other text (a prefix on each text part's first delta) under other part ids
 * (`-v2`), so a client cannot de-duplicate the new run's answer against the old one's.
 */
export async function* divergeAnswer(source: AsyncIterable<UIMessageChunk>): AsyncIterable<UIMessageChunk> {
  const prefixed = new Set<string>();
  for await (const chunk of source) {
    if (!hasPartId(chunk)) {
      yield chunk;
      continue;
    }
    const id = `${chunk.id}-v2`;
    if (chunk.type === 'text-delta' && !prefixed.has(chunk.id)) {
      prefixed.add(chunk.id);
      yield { ...chunk, id, delta: `${DIVERGED_PREFIX}${chunk.delta}` };
      continue;
    }
    yield { ...chunk, id } as UIMessageChunk;
  }
}
