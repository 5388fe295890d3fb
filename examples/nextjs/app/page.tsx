import { connection } from 'next/server';
import { Suspense } from 'react';
import { ChatApp } from './chat-app';

// Rendered per request, so the session service's URL comes from the server's environment
// at run time (the same build runs against any service), never baked into the bundle.
export default async function Home() {
  await connection();
  return (
    <Suspense>
      <ChatApp
        baseURL={
          process.env.DURABLE_CHAT_PUBLIC_BASE_URL ??
          process.env.DURABLE_CHAT_BASE_URL ??
          'http://127.0.0.1:3030'
        }
        taskIdentifier={process.env.DURABLE_CHAT_TASK ?? 'demo'}
      />
    </Suspense>
  );
}
