import { describeSessionChatStatus, type SessionChatStatus } from 'durable-chat/react';

export type BadgeKind = 'idle' | 'connecting' | 'streaming' | 'reconnecting' | 'closed' | 'error';

/** The hook's combined status, folded into the badge's few colours. */
export function badgeKind(status: SessionChatStatus): BadgeKind {
  switch (status.type) {
    case 'ready':
      return 'idle';
    case 'sending':
    case 'waking':
    case 'resuming':
      return 'connecting';
    case 'waiting':
      // Still a live turn, only quiet: the label says for how long.
      return 'streaming';
    default:
      return status.type;
  }
}

/** The connection in a few words: "Agent waking up…", "Streaming", "Reconnecting in 3 s", "Closed". */
export function StatusBadge({ status }: { status: SessionChatStatus }) {
  const kind = badgeKind(status);
  return (
    <span
      className={`badge badge-${kind}`}
      data-testid="status-badge"
      data-state={kind}
      title={status.type === 'error' ? status.error.message : undefined}
    >
      {status.type === 'error' ? 'Error' : describeSessionChatStatus(status)}
    </span>
  );
}
