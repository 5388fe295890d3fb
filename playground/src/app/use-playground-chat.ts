import { createRouteSessionCallbacks } from 'durable-chat';
import { useDurableChat, useSubagentMessages } from 'durable-chat/react';
import { useEffect, useMemo, useRef } from 'react';
import type { ChatController } from './chat-view.js';
import { describeEvent } from './describe-event.js';
import type { EventLogApi } from './event-log.js';
import { loadMessages, saveMessages } from './message-store.js';
import { CHAT_ROUTE_PATH, HEAD_START_PATH, type PlaygroundConfig } from './playground-api.js';

const CLOSE_REASON = 'closed in the playground';
// The browser half of the chat route: the secret key stays on the playground host.
const route = createRouteSessionCallbacks({ endpoint: CHAT_ROUTE_PATH });

/** The playground's chat: `useDurableChat` on the chat route, timed and logged. */
export function usePlaygroundChat(options: {
  config: PlaygroundConfig;
  chatId: string;
  /** The chat's first reply through the host's head-start route (read when the chat mounts). */
  headStart: boolean;
  log: EventLogApi;
}): ChatController {
  const { config, chatId, log } = options;
  const initialMessages = useMemo(() => loadMessages(chatId), [chatId]);
  // Sub-agent replies arrive as transient `data-subagent` parts: applied once each, even when replayed.
  const { subagents, onData } = useSubagentMessages();
  const chat = useDurableChat({
    onData,
    chatId,
    baseURL: config.baseURL,
    taskIdentifier: config.taskIdentifier,
    startSession: route.startSession,
    getAccessToken: route.getAccessToken,
    closeSession: route.closeSession,
    ...(options.headStart ? { headStart: { api: HEAD_START_PATH } } : {}),
    messages: initialMessages,
    onEvent: (event) => log.log(event.type, describeEvent(event)),
    onError: (error) => log.log('chat-error', error.message),
  });
  const { messages, status } = chat;
  const { lastEventId, runId, closed } = chat.session.state;
  const busy = status === 'submitted' || status === 'streaming';

  // Keep history for reloads, but never a half-streamed reply: the resumed stream brings
  // the live turn back from its start, and a stored copy would show it twice.
  useEffect(() => {
    if (status !== 'streaming') saveMessages(chatId, messages);
  }, [chatId, messages, status]);

  const { recordsSeen, textShown } = log;
  useEffect(() => recordsSeen(lastEventId), [lastEventId, recordsSeen]);
  const last = messages.at(-1);
  const replyHasText = busy && last?.role === 'assistant' && last.parts.some((part) => part.type === 'text');
  useEffect(() => {
    if (replyHasText) textShown();
  }, [replyHasText, textShown]);

  // Each action starts the meter at the cursor the turn begins after.
  const cursor = useRef(lastEventId);
  cursor.current = lastEventId;
  const startTurn = () => log.turnStarted(cursor.current);
  const report = (what: string) => (error: unknown) =>
    log.log('error', `${what}: ${error instanceof Error ? error.message : String(error)}`);

  return {
    messages,
    busy,
    status: chat.sessionStatus,
    error: chat.error,
    closed,
    runId,
    subagents,
    canAnswer: !busy,
    send: (text) => {
      startTurn();
      chat.sendMessage({ text }).catch(report('send'));
    },
    stop: () => {
      chat.stop().catch(report('stop'));
    },
    regenerate: () => {
      startTurn();
      chat.regenerate().catch(report('regenerate'));
    },
    respondToApproval: (id, approved) => {
      startTurn();
      Promise.resolve(chat.addToolApprovalResponse({ id, approved }))
        .then(() => chat.sendMessage())
        .catch(report('approval'));
    },
    provideOutput: (tool, toolCallId, output) => {
      startTurn();
      Promise.resolve(chat.addToolOutput({ tool, toolCallId, output }))
        .then(() => chat.sendMessage())
        .catch(report('tool output'));
    },
    close: () => {
      chat
        .close(CLOSE_REASON)
        .then(() => log.log('close', CLOSE_REASON))
        .catch(report('close'));
    },
  };
}
