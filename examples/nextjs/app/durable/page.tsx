import { connection } from 'next/server';
import { Suspense } from 'react';
import { serviceFromEnv } from '../../lib/service';
import { ChatApp } from '../chat-app';

// The same chat app on useDurableChat, the all-in-one hook (app/durable-chat.tsx).
export default async function DurableChatPage() {
  await connection();
  return (
    <Suspense>
      <ChatApp hook="useDurableChat" {...serviceFromEnv()} />
    </Suspense>
  );
}
