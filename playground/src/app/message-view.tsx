import { isDataUIPart, isToolOrDynamicToolUIPart, type UIMessage } from 'ai';
import { Markdown } from './markdown.js';
import { type ToolActions, ToolPartView } from './tool-part-view.js';

/** A custom `data-*` part, on one line: it is the agent's side channel, not the answer. */
function DataPartView({ type, data }: { type: string; data: unknown }) {
  return (
    <div className="data-part" data-testid="data-part" data-type={type}>
      <span className="muted">{type}</span>{' '}
      <code>{typeof data === 'string' ? data : JSON.stringify(data)}</code>
    </div>
  );
}

/** One message, part by part: markdown text, tool calls and custom `data-*` parts. */
export function MessageView({ message, actions }: { message: UIMessage; actions: ToolActions }) {
  return (
    <article
      className={`message ${message.role}`}
      data-testid={`message-${message.role}`}
      data-id={message.id}
    >
      <div className="role">{message.role}</div>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === 'text') return <Markdown key={key} text={part.text} />;
        if (part.type === 'reasoning') {
          return (
            <p key={key} className="muted">
              {part.text}
            </p>
          );
        }
        if (isToolOrDynamicToolUIPart(part)) return <ToolPartView key={key} part={part} actions={actions} />;
        if (isDataUIPart(part)) return <DataPartView key={key} type={part.type} data={part.data} />;
        return null;
      })}
    </article>
  );
}
