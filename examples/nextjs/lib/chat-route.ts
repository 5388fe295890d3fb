import { createChatRouteHandler } from 'durable-chat/server';

/**
 * The chat route, shared by the Node and the edge route files: it holds the secret key, so
 * it runs on the server only. Both read their settings per request from the environment.
 */
export function chatRoute(runtime: 'node' | 'edge') {
  const handler = createChatRouteHandler({
    baseURL: process.env.DURABLE_CHAT_BASE_URL ?? 'http://127.0.0.1:3030',
    secretKey: process.env.DURABLE_CHAT_SECRET_KEY ?? '',
    taskIdentifier: process.env.DURABLE_CHAT_TASK ?? 'demo',
    // A real app checks the signed-in user here (cookies, a session); the example lets
    // anyone in, so it must not be deployed as it is.
    authorize: () => true,
  });
  return async (request: Request): Promise<Response> => {
    const response = await handler(request);
    // Lets the browser (and the example's test) see which runtime answered.
    response.headers.set('x-chat-route-runtime', runtime);
    return response;
  };
}
