import type { FirstChunkJob } from './jobs/first-chunk-job.js';
import type { FollowUpJob } from './jobs/follow-up-job.js';
import type { LongTurnJob } from './jobs/long-turn-job.js';
import type { RendersJob } from './jobs/renders-job.js';
import type { ResumeJob } from './jobs/resume-job.js';
import type { ScaleJob } from './jobs/scale-job.js';
import type { ThroughputJob } from './jobs/throughput-job.js';

/**
 * Child-process entry for one client measurement. A fresh process per variant and
 * repetition keeps one client's heap and JIT state out of another's figures. The job
 * comes in `BENCH_JOB` (JSON); the answer goes back over IPC.
 */
export type WorkerJob =
  | ThroughputJob
  | ResumeJob
  | FirstChunkJob
  | FollowUpJob
  | ScaleJob
  | RendersJob
  | LongTurnJob;

export type WorkerAnswer = { ok: true; result: unknown } | { ok: false; error: string };

// Each job's module is loaded on demand, so a worker's memory holds only what its job needs
// (the throughput worker never loads React).
async function run(job: WorkerJob): Promise<unknown> {
  switch (job.kind) {
    case 'throughput':
      return (await import('./jobs/throughput-job.js')).runThroughputJob(job);
    case 'resume':
      return (await import('./jobs/resume-job.js')).runResumeJob(job);
    case 'first-chunk':
      return (await import('./jobs/first-chunk-job.js')).runFirstChunkJob(job);
    case 'follow-up':
      return (await import('./jobs/follow-up-job.js')).runFollowUpJob(job);
    case 'scale':
      return (await import('./jobs/scale-job.js')).runScaleJob(job);
    case 'renders':
      return (await import('./jobs/renders-job.js')).runRendersJob(job);
    case 'long-turn':
      return (await import('./jobs/long-turn-job.js')).runLongTurnJob(job);
  }
}

const job = JSON.parse(process.env.BENCH_JOB ?? 'null') as WorkerJob;
let answer: WorkerAnswer;
try {
  answer = { ok: true, result: await run(job) };
} catch (error) {
  console.error(error);
  answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
process.send?.(answer, () => process.exit(0));
