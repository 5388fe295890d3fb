// Resolved through the `browser` export condition: importing the secret-key helpers from
// client code must fail the build or the page loudly, never ship the key.
throw new Error(
  'durable-chat/server was imported in a browser bundle. It uses your secret key and must only run on your server.',
);
