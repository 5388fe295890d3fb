import { createRouteSessionCallbacks } from 'durable-chat';
import { useWatchChat } from 'durable-chat/react';
import { MessageView } from './message-view.js';
import { CHAT_ROUTE_PATH, type PlaygroundConfig } from './playground-api.js';

const route = createRouteSessionCallbacks({ endpoint: CHAT_ROUTE_PATH });
// A follower never answers tools: it only shows them.
const READ_ONLY = { canAnswer: false, respondToApproval() {}, provideOutput() {} };

/**
 * The chat as another device sees it: `useWatchChat` on a read-only watch token, with its own
 * connection and nothing stored. Every reply streams in, whichever tab or device sent it.
 */
export function FollowerView({ config, chatId }: { config: PlaygroundConfig; chatId: string }) {
  const view = useWatchChat({ baseURL: config.baseURL, chatId, getAccessToken: route.getWatchToken });
  return (
    <section className="follower" data-testid="follower-view" data-live={view.turnLive}>
      <header>
        <strong>Follower</strong>{' '}
        <span className="muted" data-testid="follower-phase">
          read-only · {view.phase.type}
          {view.turnLive ? ' · live' : ''}
        </span>
      </header>
      <div className="messages">
        {view.messages.map((message) => (
          <MessageView key={message.id} message={message} actions={READ_ONLY} subagents={view.subagents} />
        ))}
      </div>
    </section>
  );
}
