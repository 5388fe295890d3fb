import { connection } from 'next/server';
import { Suspense } from 'react';
import { serviceFromEnv } from '../lib/service';
import { ChatApp } from './chat-app';

// The chat on the AI SDK's own useChat with useChatSession and useFollowTurns (app/chat.tsx).
// Rendered per request, so the session service's URL comes from the server's environment
// at run time (the same build runs against any service), never baked into the bundle.
export default async function Home() {
  await connection();
  return (
    <Suspense>
      <ChatApp hook="useChat" {...serviceFromEnv()} />
    </Suspense>
  );
}
