import type { ChatInspection } from '../devtools-model.js';
import { palette } from './palette.js';

function expiry(at: number | undefined): string {
  if (at === undefined) return '–';
  const left = at - Date.now();
  if (left <= 0) return `expired ${Math.round(-left / 1000)} s ago`;
  return left < 120_000 ? `in ${Math.round(left / 1000)} s` : `in ${Math.round(left / 60_000)} min`;
}

function tab(chat: ChatInspection): string {
  if (chat.tab === undefined) return '–';
  const part = chat.tab.owner
    ? 'this tab owns the turn'
    : chat.tab.following
      ? 'another tab owns the turn'
      : 'no turn';
  return `${part} (${chat.tab.mode})`;
}

/** The chat's state as a definition list. The token is never shown: only when it expires. */
export function ChatDetails({ chat }: { chat: ChatInspection }) {
  const rows: [string, string][] = [
    ['chat', chat.chatId],
    ['session', chat.sessionId ?? '–'],
    ['status', chat.statusLabel ?? '–'],
    ['connection', chat.connection],
    ['cursor', chat.cursor === undefined ? '–' : String(chat.cursor)],
    [
      'live turn',
      chat.turnLive ? `yes${chat.turnInSeq === undefined ? '' : `, .in seq ${chat.turnInSeq}`}` : 'no',
    ],
    ['run', chat.runId ?? '–'],
    ['tab', tab(chat)],
    ['token expires', expiry(chat.tokenExpiresAt)],
    ['closed', chat.closed ? `yes${chat.closedReason === null ? '' : `: ${chat.closedReason}`}` : 'no'],
    ['last error', chat.lastError === undefined ? '–' : `${chat.lastError.code}: ${chat.lastError.message}`],
  ];
  if (chat.released) rows.push(['client', 'released (closed by its transport)']);
  return (
    <dl
      data-testid="durable-chat-devtools-details"
      style={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', gap: '2px 12px', margin: 0 }}
    >
      {rows.map(([name, value]) => (
        <div key={name} style={{ display: 'contents' }}>
          <dt style={{ color: palette.muted }}>{name}</dt>
          <dd data-field={name} style={{ margin: 0, overflowWrap: 'anywhere' }}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
