import type { ChatEntry } from './chat-list.js';

/** The list of chats: new, switch. */
export function ChatSidebar(props: {
  chats: ChatEntry[];
  activeId: string | undefined;
  onCreate(): void;
  onSelect(id: string): void;
}) {
  return (
    <nav className="sidebar" aria-label="Chats">
      <h1>durable-chat</h1>
      <button type="button" className="primary" data-testid="new-chat" onClick={props.onCreate}>
        New chat
      </button>
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
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
