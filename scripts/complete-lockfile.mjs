// The registry this project installs from does not carry every platform build of packages
// that ship native binaries (biome, rollup), so npm leaves those optional entries out of
// package-lock.json and `npm ci` then refuses the lock as out of sync. This adds the
// missing optional entries (name and version only). npm skips an optional package it
// cannot fetch or that does not fit the platform, so installs stay exact everywhere else.
// Run after any `npm install` that rewrites the lock: `node scripts/complete-lockfile.mjs`
// (or with a lockfile's path, e.g. `examples/nextjs/package-lock.json`).
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const path = process.argv[2] ? resolve(process.argv[2]) : new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    packages[`node_modules/${name}`] = { version, dev: entry.dev === true || undefined, optional: true };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
