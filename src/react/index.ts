/** durable-chat/react: hooks over the core. The only entry that imports React. */
export * from '../errors/index.js';
