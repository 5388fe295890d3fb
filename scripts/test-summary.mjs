// Prints vitest's JSON report as one plain closing line: "vitest: N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const files = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
}
console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (failed > 0 || passed === 0) process.exitCode = 1;
