'use client';
import dynamic from 'next/dynamic';

// The durable-chat devtools panel, in development only (`next dev`): a separate chunk, loaded
// only when rendered, so a production build never downloads it.
const DurableChatDevtools = dynamic(
  () => import('durable-chat/devtools').then((module) => module.DurableChatDevtools),
  { ssr: false },
);

export function Devtools() {
  return process.env.NODE_ENV === 'development' ? <DurableChatDevtools /> : null;
}
