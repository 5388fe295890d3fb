/**
 * durable-chat core: protocol types and helpers, errors, and (as they land) the
 * framework-free `SessionClient` and `SessionChatTransport`. Never imports React.
 */

export * from './client/index.js';
export { recordSession, type SessionRecorder } from './devtools/record-session.js';
export * from './errors/index.js';
export * from './protocol/index.js';
export * from './route-client/index.js';
export * from './transport/index.js';
