/**
 * The session service as the browser reaches it, and the agent's task: read from the server's
 * environment per request (the pages call `connection()` first), so one build runs against
 * any service and nothing of it is baked into the bundle.
 */
export function serviceFromEnv(): { baseURL: string; taskIdentifier: string } {
  return {
    baseURL:
      process.env.DURABLE_CHAT_PUBLIC_BASE_URL ??
      process.env.DURABLE_CHAT_BASE_URL ??
      'http://127.0.0.1:3030',
    taskIdentifier: process.env.DURABLE_CHAT_TASK ?? 'demo',
  };
}
