import type { UIMessage } from 'ai';
import { useEffect } from 'react';
import { noteStatusLabel } from '../client/inspection.js';
import type { ChatSessionHandle } from '../session/chat-session-handle.js';

/**
 * Tells inspectors (the devtools panel) what the hook shows as `statusLabel`: one weak entry
 * per chat, written when the label changes, so a panel opened later reads it at once.
 */
export function useStatusLabelForInspectors<UI_MESSAGE extends UIMessage>(
  handle: ChatSessionHandle<UI_MESSAGE>,
  label: string,
): void {
  useEffect(() => {
    const { client } = handle;
    noteStatusLabel(client, label, client.environment.now());
  }, [handle, label]);
}
