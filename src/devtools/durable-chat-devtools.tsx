import { type CSSProperties, useEffect, useState, useSyncExternalStore } from 'react';
import type { SessionRecording } from '../protocol/recording.js';
import type { ChatInspection } from './devtools-model.js';
import { DevtoolsModel } from './devtools-model.js';
import { ChatDetails } from './panel/chat-details.js';
import { palette } from './panel/palette.js';
import { Timeline } from './panel/timeline.js';

export interface DurableChatDevtoolsProps {
  /** Open at first render. Default false: a toggle button shows the panel. */
  initialIsOpen?: boolean;
  /** Where the toggle sits. Default `bottom-right`. */
  position?: 'bottom-right' | 'bottom-left';
  /** Timeline lines kept per chat. Default 300. */
  maxTimelineEntries?: number;
  /** What "Export recording" does. Default: downloads `durable-chat-<chat id>-<time>.json`. */
  onExport?: (recording: SessionRecording) => void;
}

/** Saves a recording as a JSON file, as the browser downloads one. */
export function downloadRecording(recording: SessionRecording): void {
  const blob = new Blob([`${JSON.stringify(recording, null, 2)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  const time = new Date().toISOString().replace(/[:.]/g, '-');
  link.download = `durable-chat-${recording.chatId.replace(/[^\w-]/g, '_')}-${time}.json`;
  link.click();
  // After the click has handed the blob to the download.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A floating panel that shows every durable chat on the page: its session, status, cursor,
 * live turn and run, tab, token expiry and last error, with a timeline of its life (appends,
 * `.out` connections, turn-completes, trims, token refreshes, liveness checks, waits, tab
 * hand-overs), and exports a chat's recording (tokens redacted) for `replayRecording`.
 *
 * Mount it in development only (see the README): while mounted it records every chat's wire
 * within bounds; unmounted, nothing listens and nothing is kept.
 */
export function DurableChatDevtools(props: DurableChatDevtoolsProps) {
  const {
    initialIsOpen = false,
    position = 'bottom-right',
    maxTimelineEntries,
    onExport = downloadRecording,
  } = props;
  const [model] = useState(() => new DevtoolsModel({ maxTimelineEntries }));
  useEffect(() => model.start(), [model]);
  const snapshot = useSyncExternalStore(model.subscribe, model.getSnapshot, model.getSnapshot);
  const [open, setOpen] = useState(initialIsOpen);
  const [selected, setSelected] = useState<number | undefined>(undefined);
  const chat: ChatInspection | undefined =
    snapshot.chats.find((candidate) => candidate.key === selected) ?? snapshot.chats[0];
  const side: CSSProperties = position === 'bottom-left' ? { left: 12 } : { right: 12 };

  if (!open) {
    return (
      <button
        type="button"
        data-testid="durable-chat-devtools-toggle"
        aria-expanded={false}
        onClick={() => setOpen(true)}
        style={{ ...toggleStyle, ...side }}
      >
        durable-chat · {snapshot.chats.length}
      </button>
    );
  }
  return (
    <section aria-label="durable-chat devtools" data-testid="durable-chat-devtools" style={panelStyle}>
      <header style={headerStyle}>
        <strong>durable-chat devtools</strong>
        <span style={{ color: palette.muted }}>
          {snapshot.chats.length} chat{snapshot.chats.length === 1 ? '' : 's'}
        </span>
        <button
          type="button"
          data-testid="durable-chat-devtools-toggle"
          aria-expanded={true}
          onClick={() => setOpen(false)}
          style={buttonStyle}
        >
          Close
        </button>
      </header>
      <div style={bodyStyle}>
        <ul aria-label="chats" style={listStyle}>
          {snapshot.chats.map((candidate) => (
            <li key={candidate.key}>
              <button
                type="button"
                data-testid="durable-chat-devtools-chat"
                data-chat-id={candidate.chatId}
                aria-pressed={candidate.key === chat?.key}
                onClick={() => setSelected(candidate.key)}
                style={{
                  ...chatButtonStyle,
                  background: candidate.key === chat?.key ? palette.selected : 'transparent',
                  opacity: candidate.released ? 0.6 : 1,
                }}
              >
                <span style={{ display: 'block', fontWeight: 600 }}>{candidate.chatId}</span>
                <span style={{ color: palette.muted }}>
                  {candidate.statusLabel ?? candidate.connection}
                  {candidate.turnLive ? ' · live turn' : ''}
                </span>
              </button>
            </li>
          ))}
          {snapshot.chats.length === 0 ? (
            <li style={{ color: palette.muted, padding: 8 }}>No chat yet.</li>
          ) : null}
        </ul>
        {chat === undefined ? null : (
          <div style={detailStyle}>
            <div style={{ flex: 'none', width: 400, overflowY: 'auto' }}>
              <ChatDetails chat={chat} />
              <div style={{ display: 'flex', gap: 8, margin: '8px 0' }}>
                <button
                  type="button"
                  data-testid="durable-chat-devtools-export"
                  style={actionStyle}
                  onClick={() => {
                    const recording = model.exportRecording(chat.key);
                    if (recording !== undefined) onExport(recording);
                  }}
                >
                  Export recording
                </button>
                <button type="button" style={actionStyle} onClick={() => model.clearTimeline(chat.key)}>
                  Clear timeline
                </button>
              </div>
            </div>
            <Timeline entries={chat.timeline} />
          </div>
        )}
      </div>
    </section>
  );
}

const font = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

const toggleStyle: CSSProperties = {
  position: 'fixed',
  bottom: 12,
  zIndex: 2147483000,
  font: `12px ${font}`,
  padding: '6px 10px',
  borderRadius: 6,
  border: `1px solid ${palette.border}`,
  background: palette.background,
  color: palette.text,
  cursor: 'pointer',
};

const panelStyle: CSSProperties = {
  position: 'fixed',
  left: 0,
  right: 0,
  bottom: 0,
  height: '42vh',
  zIndex: 2147483000,
  display: 'flex',
  flexDirection: 'column',
  font: `12px ${font}`,
  background: palette.background,
  color: palette.text,
  borderTop: `1px solid ${palette.border}`,
};

const headerStyle: CSSProperties = {
  display: 'flex',
  gap: 12,
  alignItems: 'center',
  padding: '6px 10px',
  borderBottom: `1px solid ${palette.border}`,
};

const bodyStyle: CSSProperties = { display: 'flex', flex: 1, minHeight: 0 };

const listStyle: CSSProperties = {
  listStyle: 'none',
  margin: 0,
  padding: 0,
  width: 240,
  overflowY: 'auto',
  borderRight: `1px solid ${palette.border}`,
};

const chatButtonStyle: CSSProperties = {
  width: '100%',
  textAlign: 'left',
  padding: '6px 10px',
  border: 'none',
  color: palette.text,
  font: 'inherit',
  cursor: 'pointer',
};

const detailStyle: CSSProperties = { flex: 1, minWidth: 0, display: 'flex', gap: 16, padding: '6px 10px' };

const buttonStyle: CSSProperties = {
  marginLeft: 'auto',
  font: 'inherit',
  padding: '2px 8px',
  borderRadius: 4,
  border: `1px solid ${palette.border}`,
  background: palette.selected,
  color: palette.text,
  cursor: 'pointer',
};

const actionStyle: CSSProperties = { ...buttonStyle, marginLeft: 0 };
