import { useCallback, useEffect, useState } from 'react';
import { type ChatEntry, useChatList } from './chat-list.js';
import { ChatSidebar } from './chat-sidebar.js';
import { ChatView } from './chat-view.js';
import { type EventLogApi, useEventLog } from './event-log.js';
import { EventLogPanel } from './event-log-panel.js';
import { FaultPanel } from './fault-panel.js';
import { FollowerView } from './follower-view.js';
import { type FaultName, injectFault, type PlaygroundConfig } from './playground-api.js';
import { usePlaygroundChat } from './use-playground-chat.js';

function titleFrom(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
}

/** One chat, mounted per chat id: switching chats mounts a fresh hook for the other id. */
function PlaygroundChat(props: {
  config: PlaygroundConfig;
  entry: ChatEntry;
  log: EventLogApi;
  update(patch: Partial<Omit<ChatEntry, 'id'>>): void;
}) {
  const { entry, update } = props;
  const chat = usePlaygroundChat({
    config: props.config,
    chatId: entry.id,
    headStart: props.config.headStart && entry.headStart === true,
    log: props.log,
  });
  const firstUserText = chat.messages
    .find((message) => message.role === 'user')
    ?.parts.find((part) => part.type === 'text')?.text;

  useEffect(() => {
    if (firstUserText !== undefined && entry.title === 'New chat')
      update({ title: titleFrom(firstUserText) });
  }, [firstUserText, entry.title, update]);
  useEffect(() => {
    if (chat.closed && !entry.closed) update({ closed: true });
  }, [chat.closed, entry.closed, update]);

  const [following, setFollowing] = useState(false);
  return (
    <div className="chat-with-follower">
      <ChatView title={entry.title} chat={chat} />
      <label className="follow-toggle">
        <input
          type="checkbox"
          data-testid="follow-toggle"
          checked={following}
          onChange={(event) => setFollowing(event.target.checked)}
        />{' '}
        Show a follower (another device, read-only)
      </label>
      {following && <FollowerView config={props.config} chatId={entry.id} />}
    </div>
  );
}

/** `?headStart=1` turns head start on for new chats from the first page load. */
const headStartAsked = () => new URLSearchParams(window.location.search).get('headStart') === '1';

export function App({ config, forgotten }: { config: PlaygroundConfig; forgotten: boolean }) {
  const list = useChatList();
  const log = useEventLog();
  const [headStartForNew, setHeadStartForNew] = useState(headStartAsked);
  const { log: write } = log;

  useEffect(() => {
    write('config', `${config.mode} · task ${config.taskIdentifier} · ${config.baseURL}`);
    if (forgotten) write('config', 'the local dev server restarted: chats of the earlier run were forgotten');
  }, [config, forgotten, write]);

  const inject = useCallback(
    async (fault: FaultName) => {
      write('fault', `${fault} requested`);
      try {
        write('fault', await injectFault(fault));
      } catch (error) {
        write('error', `fault ${fault} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    [write],
  );

  const { active, update } = list;
  const updateActive = useCallback(
    (patch: Partial<Omit<ChatEntry, 'id'>>) => {
      if (active !== undefined) update(active.id, patch);
    },
    [active, update],
  );

  return (
    <div className="layout">
      <ChatSidebar
        chats={list.chats}
        activeId={active?.id}
        onCreate={() => list.create({ headStart: config.headStart && headStartForNew })}
        onSelect={list.select}
        headStart={config.headStart ? { checked: headStartForNew, onChange: setHeadStartForNew } : undefined}
      />
      {active === undefined ? (
        <main className="chat" />
      ) : (
        <PlaygroundChat key={active.id} config={config} entry={active} log={log} update={updateActive} />
      )}
      <aside className="side">
        <FaultPanel enabled={config.faults} inject={inject} />
        <EventLogPanel log={log} />
      </aside>
    </div>
  );
}
