#!/usr/bin/env node
// `durable-chat dev`: filled in by the dev-server work.
console.error('durable-chat: the dev server is not available in this build yet');
process.exitCode = 1;
