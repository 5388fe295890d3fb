import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { loadVariant, userMessage, type VariantName } from '../clients/client-variant.js';
import { floorTurn } from '../clients/floor-client.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import { chatIdFor, expectedReply } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { createCollector, drain, verifyChunks } from '../verify-turn.js';
import { type Sample, sampleProcess, startSample } from './measure.js';

export interface ScaleJob {
  kind: 'scale';
  variant: VariantName;
  baseUrl: string;
  sessions: number;
  /** A paced turn: every session streams it at model speed, all at once. */
  turn: ServedTurnSpec;
  /** bench/heap-snapshot.ts: heap snapshots just before the sends and `atMs` into the turn. */
  heapSnapshot?: { directory: string; atMs: number };
  /**
   * bench/alloc-profile.ts: V8's sampling heap profile of the sends, counting objects the
   * garbage collector has freed since (what a chat allocates, not only what it keeps),
   * written to `path` as a `.heapprofile`.
   */
  allocationProfile?: { path: string; intervalBytes: number };
}

/** Growth since just before the sends, at the moment of the mid-turn heap snapshot. */
export interface HeapMoment {
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
}

export interface ScaleResult extends Sample {
  sessions: number;
  chunks: number;
  heapSnapshot?: HeapMoment;
}

function memoryNow(): HeapMoment {
  const usage = process.memoryUsage();
  return {
    rssBytes: usage.rss,
    heapUsedBytes: usage.heapUsed,
    externalBytes: usage.external,
    arrayBuffersBytes: usage.arrayBuffers,
  };
}

/** Writes `before.heapsnapshot` now and `during.heapsnapshot` `atMs` later (after the sends start). */
function scheduleSnapshots(options: { directory: string; atMs: number }): () => Promise<HeapMoment> {
  writeHeapSnapshot(`${options.directory}before.heapsnapshot`);
  globalThis.gc?.();
  const start = memoryNow();
  const taken = new Promise<HeapMoment>((resolve) =>
    setTimeout(() => {
      const now = memoryNow();
      writeHeapSnapshot(`${options.directory}during.heapsnapshot`);
      resolve({
        rssBytes: now.rssBytes - start.rssBytes,
        heapUsedBytes: now.heapUsedBytes - start.heapUsedBytes,
        externalBytes: now.externalBytes - start.externalBytes,
        arrayBuffersBytes: now.arrayBuffersBytes - start.arrayBuffersBytes,
      });
    }, options.atMs),
  );
  return () => taken;
}

/** Starts sampling every allocation now; the returned function stops and writes the profile. */
async function startAllocationProfile(options: {
  path: string;
  intervalBytes: number;
}): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: options.intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    await writeFile(options.path, JSON.stringify(profile));
  };
}

const CREATE_CONCURRENCY = 50;

/**
 * Many chats streaming at once in one process (a server-side consumer or a dashboard):
 * one client object for all sessions where the client allows it, sessions created
 * untimed, then every send started together and every reply checked exactly.
 */
export async function runScaleJob(job: ScaleJob): Promise<ScaleResult> {
  const variant = await loadVariant(job.variant);
  const expected = expectedReply(job.turn);
  const chatIds = Array.from({ length: job.sessions }, (_, index) =>
    chatIdFor(job.turn.name, `${job.variant}-${process.pid}-${index}`),
  );
  const sessions: { publicAccessToken: string; isCached: boolean }[] = [];
  for (let index = 0; index < chatIds.length; index += CREATE_CONCURRENCY) {
    const slice = chatIds.slice(index, index + CREATE_CONCURRENCY);
    sessions.push(...(await Promise.all(slice.map((chatId) => createSession(job.baseUrl, chatId)))));
  }
  const snapshots = job.heapSnapshot === undefined ? undefined : scheduleSnapshots(job.heapSnapshot);
  const stopProfile =
    job.allocationProfile === undefined ? undefined : await startAllocationProfile(job.allocationProfile);
  const sample = startSample();
  const collectors = await Promise.all(
    chatIds.map(async (chatId, index) => {
      // The create's `isCached` goes along, as an app's route hands it to the browser.
      const context = {
        baseUrl: job.baseUrl,
        chatId,
        token: sessions[index]?.publicAccessToken ?? '',
        isCached: sessions[index]?.isCached,
        message: userMessage('hi'),
      };
      const collector = createCollector();
      if (job.variant === 'floor') await floorTurn(context, collector.add);
      else await drain(await variant.send(context), collector);
      return collector;
    }),
  );
  const result = sampleProcess(sample);
  await stopProfile?.();
  const moment = await snapshots?.();
  let chunks = 0;
  for (const collector of collectors) {
    verifyChunks(`${job.variant}/scale`, expected, collector);
    chunks += collector.count;
  }
  variant.dispose?.();
  return {
    ...result,
    sessions: job.sessions,
    chunks,
    ...(moment === undefined ? {} : { heapSnapshot: moment }),
  };
}
