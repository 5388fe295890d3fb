import { pathToFileURL } from 'node:url';
import { cliArgs } from './cli-args.js';
import { createDurableChatVariant, type DurableChatModule } from './clients/durable-chat-client.js';
import { createFloorVariant, floorTurn } from './clients/floor-client.js';
import { encodeTurn } from './fixture-encoding.js';
import { fakeSessionToken } from './fixture-routes.js';
import { chatIdFor, FIRST_APPEND_SEQ, type TurnSpec } from './fixture-turn.js';
import { median } from './stats.js';
import { createCollector, drain, verifyChunks } from './verify-turn.js';

/**
 * `TSX_TSCONFIG_PATH=bench/tsconfig.json npx tsx bench/in-memory.ts [--batch=100]
 * [--tail=live|end] [--deltas=100000] [--runs=7] [--unmerged]`
 * (`DURABLE_CHAT_BASELINE=<another build's dist/index.js>` adds that build as `baseline`)
 * The client side of the throughput scenario with no socket and no server process: `fetch`
 * answers from memory with the fixture's pre-encoded bytes (64 KiB per read). Every variant
 * reads the same bytes in one process, interleaved run by run, so a change to the hot path
 * shows up as a ratio without the loopback's noise. Not a substitute for `npm run bench`
 * (real sockets, a process per run); a quick A/B between two builds.
 */
const args = cliArgs();
const spec: TurnSpec = {
  name: 'mem',
  deltas: Number(args.get('deltas') ?? 100_000),
  batchSize: Number(args.get('batch') ?? 100),
  tail: (args.get('tail') ?? 'live') as 'live' | 'end',
};
const runs = Number(args.get('runs') ?? 7);
// `--unmerged`: durable-chat with `coalesceDeltas: false` (one chunk per record, like the floors).
const unmerged = args.get('unmerged') === 'true';
const encoded = encodeTurn(spec);
const pieces = [...encoded.piecesFrom(-1, 64 * 1024)].map((piece) => new Uint8Array(piece.bytes));

function outResponse(): Response {
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Each piece in its own macrotask, as reads from a socket arrive.
      await new Promise((resolve) => setImmediate(resolve));
      const piece = pieces[next++];
      // Holds the long poll open after the turn, as the service does; readers stop at turn-complete.
      if (piece !== undefined) controller.enqueue(piece);
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const url = String(input instanceof Request ? input.url : input);
  if (url.endsWith('/in/append')) {
    if (init?.body !== undefined) await new Response(init.body).text();
    return Response.json({ ok: true, seq: FIRST_APPEND_SEQ });
  }
  if (url.endsWith('/out')) return outResponse();
  return Response.json({ ok: false }, { status: 404 });
};

type Name = 'floor' | 'floor-stream' | 'durable-chat' | 'baseline';
const baselinePath = process.env.DURABLE_CHAT_BASELINE;
const baseline =
  baselinePath === undefined || baselinePath === ''
    ? undefined
    : ((await import(pathToFileURL(baselinePath).href)) as DurableChatModule);
const names: Name[] = ['floor', 'floor-stream', 'durable-chat', ...(baseline ? (['baseline'] as const) : [])];
const expected = { text: encoded.turn.text, chunkCount: encoded.turn.chunkCount, deltas: spec.deltas };

async function once(name: Name, run: number): Promise<number> {
  const chatId = chatIdFor(spec.name, `${name}-${run}`);
  const context = {
    baseUrl: 'http://in-memory',
    chatId,
    token: fakeSessionToken(chatId),
    isCached: false,
    message: { id: `u-${run}`, role: 'user' as const, parts: [{ type: 'text' as const, text: 'hi' }] },
  };
  const collector = createCollector();
  const options = unmerged ? { coalesceDeltas: false } : {};
  const variant =
    name === 'durable-chat'
      ? createDurableChatVariant(options)
      : name === 'baseline' && baseline !== undefined
        ? createDurableChatVariant(options, { module: baseline, name: 'durable-chat-baseline' })
        : createFloorVariant();
  const start = process.cpuUsage();
  if (name === 'floor') await floorTurn(context, collector.add);
  else await drain(await variant.send(context), collector);
  const cpu = process.cpuUsage(start);
  variant.dispose?.();
  verifyChunks(`${name}/${run}`, expected, collector);
  return (cpu.user + cpu.system) / encoded.turn.chunkCount;
}

const samples = new Map<Name, number[]>(names.map((name) => [name, []]));
for (const name of names) await once(name, -1); // warm-up: JIT every path first
for (let run = 0; run < runs; run++) {
  for (let index = 0; index < names.length; index++) {
    const name = names[(index + run) % names.length] as Name;
    samples.get(name)?.push(await once(name, run));
  }
}
const floor = median(samples.get('floor') ?? []);
const floorStream = median(samples.get('floor-stream') ?? []);
console.log(
  `in-memory, batch ${spec.batchSize}, tail ${spec.tail}, ${spec.deltas} deltas, ${runs} runs${unmerged ? ', coalesceDeltas: false' : ''}`,
);
for (const name of names) {
  const value = median(samples.get(name) ?? []);
  console.log(
    `${name.padEnd(13)} ${value.toFixed(2)} µs/chunk  ${(value / floor).toFixed(2)}x floor  ${(value / floorStream).toFixed(2)}x floor-stream`,
  );
}
