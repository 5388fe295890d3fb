import type { ChatEntry } from './chat-list.js';

/** The list of chats: new (with or without head start), switch. */
export function ChatSidebar(props: {
  chats: ChatEntry[];
  activeId: string | undefined;
  onCreate(): void;
  onSelect(id: string): void;
  /** Shown when the host serves a head-start route: new chats get their first reply from it. */
  headStart?: { checked: boolean; onChange(checked: boolean): void };
}) {
  const { headStart } = props;
  return (
    <nav className="sidebar" aria-label="Chats">
      <h1>durable-chat</h1>
      <button type="button" className="primary" data-testid="new-chat" onClick={props.onCreate}>
        New chat
      </button>
      {headStart !== undefined && (
        <label
          className="head-start-toggle"
          title="the first reply of a new chat comes from the host's own route"
        >
          <input
            type="checkbox"
            data-testid="head-start-toggle"
            checked={headStart.checked}
            onChange={(event) => headStart.onChange(event.target.checked)}
          />{' '}
          Head start for new chats
        </label>
      )}
      <ul data-testid="chat-list">
        {props.chats.map((chat) => (
          <li key={chat.id}>
            <button
              type="button"
              aria-current={chat.id === props.activeId}
              className={chat.closed ? 'closed' : undefined}
              data-chat-id={chat.id}
              title={chat.id}
              onClick={() => props.onSelect(chat.id)}
            >
              {chat.title}
              {chat.headStart === true && <span className="muted"> · head start</span>}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
