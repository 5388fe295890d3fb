import type { Server } from 'node:net';
import { ValidationError } from 'durable-chat';

/** How many ports after a taken default are tried before giving up. */
export const PORT_TRIES = 50;

export interface ListenOptions {
  port: number;
  host: string;
  /** The user chose this port (`PORT`): take it or fail, never another one. */
  strict: boolean;
  /** Told once per taken port, so the user knows why the printed URL differs from 5173. */
  onPortTaken?: (port: number) => void;
}

/**
 * Listens on `port`, or, when it is taken and the port was not the user's choice, on the
 * next free one (as Vite does with its own 5173): a second playground or another dev
 * server on the default port should not stop this one.
 */
export async function listenFromPort(server: Server, options: ListenOptions): Promise<void> {
  const last =
    options.strict || options.port === 0 ? options.port : Math.min(options.port + PORT_TRIES, 65_535);
  for (let port = options.port; ; port++) {
    try {
      await listenOnce(server, port, options.host);
      return;
    } catch (error) {
      const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!taken) throw error;
      if (port >= last) {
        throw new ValidationError({
          field: 'PORT',
          message: options.strict
            ? `PORT=${port} is in use on ${options.host}: stop what holds it, or set PORT to another port (0 picks any free one)`
            : `ports ${options.port}-${last} are all in use on ${options.host}: set PORT to a free port (0 picks any free one)`,
        });
      }
      options.onPortTaken?.(port);
    }
  }
}

function listenOnce(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    // After a failed listen() the same server may listen again (Node documents it).
    server.listen(port, host);
  });
}
