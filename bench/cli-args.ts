import { parseArgs } from 'node:util';

/** `--key=value` and bare `--flag` (read as `'true'`) options of a bench script, by name. */
export function cliArgs(argv: string[] = process.argv.slice(2)): Map<string, string> {
  const { values } = parseArgs({ args: argv, strict: false, allowPositionals: true });
  return new Map(Object.entries(values).map(([key, value]) => [key, String(value)]));
}
