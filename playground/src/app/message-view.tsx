import { isDataUIPart, isToolOrDynamicToolUIPart, type UIMessage } from 'ai';
import type { SubagentEntry } from 'durable-chat';
import { Markdown } from './markdown.js';
import { SubagentView } from './subagent-view.js';
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

/** The playground's head-start route marks its reply so (see playground/src/host/head-start-route.ts). */
function cameViaHeadStart(message: UIMessage): boolean {
  return (message.metadata as { headStart?: unknown } | undefined)?.headStart === true;
}

/** One message, part by part: markdown text, tool calls (with the sub-agent a call ran) and custom `data-*` parts. */
export function MessageView({
  message,
  actions,
  subagents,
}: {
  message: UIMessage;
  actions: ToolActions;
  subagents?: ReadonlyMap<string, SubagentEntry<UIMessage>>;
}) {
  return (
    <article
      className={`message ${message.role}`}
      data-testid={`message-${message.role}`}
      data-id={message.id}
    >
      <div className="role">
        {message.role}
        {cameViaHeadStart(message) && (
          <span className="head-start-badge" data-testid="head-start-badge">
            via head start (the host's route, while the agent booted)
          </span>
        )}
      </div>
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
        if (isToolOrDynamicToolUIPart(part)) {
          const subagent = subagents?.get(part.toolCallId);
          return (
            <div key={key}>
              <ToolPartView part={part} actions={actions} />
              {subagent !== undefined && <SubagentView entry={subagent} />}
            </div>
          );
        }
        if (isDataUIPart(part)) return <DataPartView key={key} type={part.type} data={part.data} />;
        return null;
      })}
    </article>
  );
}
