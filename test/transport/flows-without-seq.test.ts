/**
 * Client conformance: every transport flow again, against a dev server that sends neither
 * the append's `seq` nor `session-in-event-id` (both optional on the wire). Turn
 * attribution then rests on the live edge the client reads before it sends.
 */
import { serverDefaults } from './support/dev-server-fixture.js';

serverDefaults.wire = { appendSeq: false, sessionInEventId: false };

await import('./flows.test.js');
await import('./happy-path.test.js');
await import('./fault-cases.test.js');
await import('./backlog.test.js');
await import('./turn-integrity.test.js');
