// Resolved through the `browser` export condition: importing the secret-key helpers from
// client code must fail the build or the page loudly, never ship the key. Server runtimes
// whose bundlers also set `browser` (Next.js edge, Cloudflare Workers) match one of the
// conditions listed before it in package.json (`edge-light`, `workerd`, `worker`, `node`,
// `deno`, `bun`) and never load this module.
const message =
  'durable-chat/server was imported in a browser bundle. It uses your secret key and must only run on your server.';

// The package is `sideEffects: false`, so a bundler keeps this module only when one of its
// names is used. Exporting the server entry's functions keeps it in, and the throw below
// then runs as the bundle loads; calling a stub (should the load survive) throws the same.
export function createSessionsApi(): never {
  throw new Error(message);
}

export function createChatRouteHandler(): never {
  throw new Error(message);
}

export function createNodeChatRouteHandler(): never {
  throw new Error(message);
}

export function toNodeHandler(): never {
  throw new Error(message);
}

export function createHeadStartHandler(): never {
  throw new Error(message);
}

export function createWatchToken(): never {
  throw new Error(message);
}

throw new Error(message);
