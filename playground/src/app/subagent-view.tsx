import type { UIMessage } from 'ai';
import type { SubagentEntry } from 'durable-chat';
import { Markdown } from './markdown.js';

/** What a sub-agent said, rebuilt from its `data-subagent` batches, under the tool call that ran it. */
export function SubagentView({ entry }: { entry: SubagentEntry<UIMessage> }) {
  const text = entry.message?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
  return (
    <div
      className="subagent"
      data-testid="subagent"
      data-finished={entry.finished}
      data-batches={entry.applied}
    >
      <div className="muted">
        sub-agent · {entry.applied} batch{entry.applied === 1 ? '' : 'es'}
        {entry.finished ? '' : ' · streaming'}
      </div>
      <Markdown text={text} />
    </div>
  );
}
