import { chatRoute } from '../../../lib/chat-route';

// The same route on the edge runtime: `durable-chat/server` uses Web APIs only.
export const runtime = 'edge';
export const POST = chatRoute('edge');
