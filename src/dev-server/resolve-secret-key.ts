import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors/validation-error.js';
import { generateSecretKey } from './options.js';

/** Environment variables `durable-chat dev` takes its key from, first set wins. */
export const SECRET_KEY_VARIABLES = ['DURABLE_CHAT_SECRET_KEY', 'TRIGGER_SECRET_KEY'] as const;

/** The file in the data folder that keeps a generated key across restarts. */
export const SECRET_KEY_FILE = 'secret-key';

export interface ResolvedSecretKey {
  secretKey: string;
  /** Where it came from, for the start banner: the user must know what to copy and where. */
  source: string;
  /** The user gave it (flag or environment): the banner masks it. */
  supplied: boolean;
}

/**
 * The CLI's secret key: `--secret-key`, else the environment, else the key stored in the
 * data folder, else a new one written there. A key that changed at every start would turn
 * every app's route into a failing one after each restart until the user copied it again.
 */
export async function resolveSecretKey(options: {
  flag: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  dataDir: string;
}): Promise<ResolvedSecretKey> {
  if (options.flag !== undefined)
    return { secretKey: checked(options.flag, '--secret-key'), source: 'from --secret-key', supplied: true };
  for (const name of SECRET_KEY_VARIABLES) {
    const value = options.env[name];
    if (value !== undefined && value !== '')
      return { secretKey: checked(value, name), source: `from $${name}`, supplied: true };
  }
  const path = join(options.dataDir, SECRET_KEY_FILE);
  const stored = await readStoredKey(path);
  if (stored !== undefined)
    return { secretKey: checked(stored, path), source: `from ${path}`, supplied: false };
  const secretKey = generateSecretKey();
  await mkdir(options.dataDir, { recursive: true });
  // 'wx': never overwrite a key another process stored meanwhile; mode 600: it is a credential.
  await writeFile(path, `${secretKey}\n`, { flag: 'wx', mode: 0o600 });
  return { secretKey, source: `new, saved in ${path}`, supplied: false };
}

async function readStoredKey(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function checked(key: string, origin: string): string {
  if (key === '' || /\s/.test(key)) {
    throw new ValidationError({
      field: origin,
      message: `${origin}: the secret key must be one word without spaces; fix or remove it`,
    });
  }
  return key;
}
