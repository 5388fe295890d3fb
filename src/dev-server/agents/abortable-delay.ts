/** Waits `ms`, or less if the signal aborts (never rejects: the caller checks the signal). */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Splits text into pieces of `size` characters (code points are kept whole). */
export function splitText(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let index = 0; index < characters.length; index += size) {
    pieces.push(characters.slice(index, index + size).join(''));
  }
  return pieces;
}
