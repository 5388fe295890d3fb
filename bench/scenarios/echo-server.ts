import { type BenchChild, spawnBenchChild } from '../child-process.js';

export interface EchoServer {
  url: string;
  devServer: { secretKey: string; taskIdentifier: string };
  child: BenchChild;
}

/** Starts `startDevServer` with the echo agent in its own process. */
export async function startEchoServerChild(): Promise<EchoServer> {
  const child = spawnBenchChild('./echo-server-child.ts', {});
  try {
    const ready = await child.next<{ type: 'ready'; url: string; secretKey: string }>();
    return { url: ready.url, devServer: { secretKey: ready.secretKey, taskIdentifier: 'echo' }, child };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
