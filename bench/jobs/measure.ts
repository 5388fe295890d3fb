/** Client-side cost of one measured section, in this process only. */
export interface Sample {
  wallMs: number;
  /** User + system CPU of the whole process (all its threads) during the section. */
  cpuUs: number;
  /** Peak resident set of the process's life so far, bytes. */
  peakRssBytes: number;
  /** Resident set just before the section, after a GC when `--expose-gc` is on. */
  baselineRssBytes: number;
}

export interface SampleStart {
  wall: number;
  cpu: NodeJS.CpuUsage;
  baselineRssBytes: number;
}

export function startSample(): SampleStart {
  globalThis.gc?.();
  const baselineRssBytes = process.memoryUsage.rss();
  return { wall: performance.now(), cpu: process.cpuUsage(), baselineRssBytes };
}

export function sampleProcess(start: SampleStart): Sample {
  const wallMs = performance.now() - start.wall;
  const cpu = process.cpuUsage(start.cpu);
  return {
    wallMs,
    cpuUs: cpu.user + cpu.system,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    baselineRssBytes: start.baselineRssBytes,
  };
}
