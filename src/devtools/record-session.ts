import { attachInspector, type InspectionTap } from '../client/inspection.js';
import type { SessionRecording } from '../protocol/recording.js';
import { ChatRecorder, type RecordingLimits } from './chat-recorder.js';

/** A chat being recorded. */
export interface SessionRecorder {
  readonly chatId: string;
  /** The recording so far (recording goes on). */
  snapshot(): SessionRecording;
  /** Stops recording and returns the recording. Further calls return the same. */
  stop(): SessionRecording;
}

const recorders = new Map<string, Set<ChatRecorder>>();
let detach: (() => void) | undefined;

// One tap for every recorder on the page; attached while at least one records, so a page
// that records nothing pays nothing.
const tap: InspectionTap = {
  event(event) {
    for (const recorder of recorders.get(event.chatId) ?? []) recorder.event(event);
  },
  note(chatId, note) {
    for (const recorder of recorders.get(chatId) ?? []) recorder.note(note);
  },
  fetch(request, send) {
    const active = recorders.get(request.chatId);
    if (active === undefined) return send();
    let next = send;
    for (const recorder of active) {
      const inner = next;
      next = () => recorder.exchange(request, inner);
    }
    return next();
  },
};

/**
 * Starts recording a chat from now on: every request its client makes to the session service
 * (and the answer, as it arrives), the app's `startSession` answers, and the chat's events,
 * tokens redacted. Works without React. Serve the result with `replayRecording` from
 * `durable-chat/dev-server` to run the same client against it again.
 *
 * Start it before the moment to reproduce (best: before the chat's first request); a
 * recording begun mid-turn replays from there.
 */
export function recordSession(chatId: string, limits?: RecordingLimits): SessionRecorder {
  if (typeof chatId !== 'string' || chatId === '')
    throw new TypeError('recordSession needs the chat id to record');
  const recorder = new ChatRecorder(chatId, limits);
  let set = recorders.get(chatId);
  if (set === undefined) {
    set = new Set();
    recorders.set(chatId, set);
  }
  set.add(recorder);
  detach ??= attachInspector(tap);
  let final: SessionRecording | undefined;
  return {
    chatId,
    snapshot: () => final ?? recorder.export(),
    stop() {
      if (final !== undefined) return final;
      final = recorder.export();
      const active = recorders.get(chatId);
      active?.delete(recorder);
      if (active?.size === 0) recorders.delete(chatId);
      if (recorders.size === 0) {
        detach?.();
        detach = undefined;
      }
      return final;
    },
  };
}
