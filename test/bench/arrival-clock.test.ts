import { describe, expect, it } from 'vitest';
import { arrivalClock } from '../../bench/jobs/arrival-clock.js';

/** A fetch answering every URL with `pieces` as separate body reads. */
function piecesFetch(pieces: string[]): typeof fetch {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece));
          controller.close();
        },
      }),
    );
}

async function drain(response: Response): Promise<string> {
  return response.text();
}

describe('bench arrival clock', () => {
  it('notes one arrival per text-delta record of an .out body, also when a record is split across reads', async () => {
    const body = [
      'data: {"type":"text-delta"} {"type":"text-',
      'delta"} {"type":"start"}',
      ' {"type":"text-delta"}',
    ];
    const clock = arrivalClock(piecesFetch(body));
    const response = await clock.fetch('http://x/realtime/v1/sessions/s/out');
    expect(await drain(response)).toBe(body.join(''));
    expect(clock.arrivals).toHaveLength(3);
    expect([...clock.arrivals].sort((a, b) => a - b)).toEqual(clock.arrivals);
  });

  it('leaves other requests alone', async () => {
    const clock = arrivalClock(piecesFetch(['{"type":"text-delta"}']));
    await drain(await clock.fetch('http://x/realtime/v1/sessions/s/in/append'));
    expect(clock.arrivals).toHaveLength(0);
  });
});
