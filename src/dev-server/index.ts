/** durable-chat/dev-server: the local session server (Node only). */
export * from '../errors/index.js';
