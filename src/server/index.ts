/** durable-chat/server: session management with the secret key. Server runtimes only. */
export * from '../errors/index.js';
