import { chatRoute } from '../../../lib/chat-route';

// Node.js runtime (Next's default for route handlers).
export const POST = chatRoute('node');
