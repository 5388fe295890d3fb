import { ValidationError } from 'durable-chat';

/** Where the playground's chats run: the bundled dev server, or a real deployment. */
export type PlaygroundBackend =
  /** `bootDelayMs`: every new run waits that long first, as a cold start would (head start shows its worth). */
  | { kind: 'local'; bootDelayMs?: number }
  | { kind: 'remote'; baseURL: string; secretKey: string; taskIdentifier: string };

export interface PlaygroundSettings {
  port: number;
  /** `PORT` was set: that port or an error. Otherwise a taken default moves to the next free one. */
  strictPort: boolean;
  host: string;
  backend: PlaygroundBackend;
  /** Called for each taken port the playground moves past. */
  onPortTaken?: (port: number) => void;
}

export const DEFAULT_PORT = 5173;
export const DEFAULT_HOST = '127.0.0.1';

function readPort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ValidationError({ field: 'PORT', message: `PORT: expected an integer 0-65535, got "${raw}"` });
  }
  return port;
}

function readBootDelay(raw: string | undefined): { bootDelayMs?: number } {
  if (raw === undefined || raw === '') return {};
  const bootDelayMs = Number(raw);
  if (!Number.isInteger(bootDelayMs) || bootDelayMs < 0 || bootDelayMs > 60_000) {
    throw new ValidationError({
      field: 'BOOT_DELAY_MS',
      message: `BOOT_DELAY_MS: expected an integer 0-60000 (ms), got "${raw}"`,
    });
  }
  return { bootDelayMs };
}

function readBaseURL(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new ValidationError({
      field: 'DURABLE_CHAT_BASE_URL',
      message: `DURABLE_CHAT_BASE_URL: not a URL (${cause instanceof Error ? cause.message : 'unparseable'})`,
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ValidationError({
      field: 'DURABLE_CHAT_BASE_URL',
      message: 'DURABLE_CHAT_BASE_URL: use http(s)',
    });
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Reads the playground's settings from the environment. With `DURABLE_CHAT_BASE_URL` set,
 * the secret key and the task id are required too; the key's value never appears in an
 * error message.
 */
export function readPlaygroundEnv(env: Record<string, string | undefined>): PlaygroundSettings {
  const port = readPort(env.PORT);
  const strictPort = env.PORT !== undefined && env.PORT !== '';
  const host = env.HOST !== undefined && env.HOST !== '' ? env.HOST : DEFAULT_HOST;
  const baseURL = env.DURABLE_CHAT_BASE_URL;
  if (baseURL === undefined || baseURL === '') {
    return { port, strictPort, host, backend: { kind: 'local', ...readBootDelay(env.BOOT_DELAY_MS) } };
  }
  const secretKey = env.DURABLE_CHAT_SECRET_KEY;
  const taskIdentifier = env.DURABLE_CHAT_TASK;
  if (secretKey === undefined || secretKey === '') {
    throw new ValidationError({
      field: 'DURABLE_CHAT_SECRET_KEY',
      message: 'DURABLE_CHAT_SECRET_KEY is required when DURABLE_CHAT_BASE_URL is set',
    });
  }
  if (taskIdentifier === undefined || taskIdentifier === '') {
    throw new ValidationError({
      field: 'DURABLE_CHAT_TASK',
      message: 'DURABLE_CHAT_TASK (the chat agent task id) is required when DURABLE_CHAT_BASE_URL is set',
    });
  }
  return {
    port,
    strictPort,
    host,
    backend: { kind: 'remote', baseURL: readBaseURL(baseURL), secretKey, taskIdentifier },
  };
}
