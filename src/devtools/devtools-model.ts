import {
  attachInspector,
  type InspectableChat,
  type InspectionTap,
  inspectableChats,
  rememberedOf,
} from '../client/inspection.js';
import type { SessionRecording } from '../protocol/recording.js';
import { ChatRecorder, type RecordingLimits } from './chat-recorder.js';
import { eventLine, exchangeLine, noteLine, type TimelineEntry } from './timeline-text.js';

/** What the panel shows of one chat. Never a token: only when it expires. */
export interface ChatInspection {
  /** Tells two clients of one chat id apart (two tabs' transports in one page, a test). */
  key: number;
  chatId: string;
  sessionId: string | undefined;
  /** The hooks' `statusLabel` (undefined without React hooks). */
  statusLabel: string | undefined;
  /** The `.out` connection, as `ChatSessionState.status.type` says. */
  connection: string;
  /** The last `seq_num` read from `.out`. */
  cursor: number | undefined;
  turnLive: boolean;
  /** The live turn's `.in` seq, once its append was answered. */
  turnInSeq: number | undefined;
  runId: string | undefined;
  tab: { mode: string; owner: boolean; following: boolean } | undefined;
  tokenExpiresAt: number | undefined;
  closed: boolean;
  closedReason: string | null;
  lastError: { code: string; message: string } | undefined;
  /** The client was closed (released by its transport); kept so its recording can be exported. */
  released: boolean;
  /** Oldest first, at most `maxTimelineEntries`. */
  timeline: readonly TimelineEntry[];
}

export interface DevtoolsSnapshot {
  chats: readonly ChatInspection[];
}

export interface DevtoolsModelOptions {
  /** Timeline lines kept per chat (a ring). Default 300. */
  maxTimelineEntries?: number;
  /** What each chat's recording keeps while the panel is mounted. */
  recording?: RecordingLimits;
  /** At most one update to the panel per this many ms (a reply's chunks change the cursor often). Default 100. */
  updateEveryMs?: number;
}

interface Entry {
  key: number;
  chat: InspectableChat;
  recorder: ChatRecorder;
  timeline: TimelineEntry[];
  released: boolean;
  unsubscribe: () => void;
}

const MAX_RELEASED = 20;

/**
 * The devtools' view of every chat on the page: attaches to the inspection hub while started
 * (and only then: a page without the panel pays nothing), keeps each chat's timeline in a
 * ring and its recording within bounds, and publishes snapshots at most every
 * `updateEveryMs`. Framework-free; the React panel renders it.
 */
export class DevtoolsModel {
  private readonly entries: Entry[] = [];
  private readonly listeners = new Set<() => void>();
  private snapshot: DevtoolsSnapshot = { chats: [] };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private detach: (() => void) | undefined;
  private nextKey = 1;
  private readonly maxTimeline: number;
  private readonly updateEveryMs: number;

  constructor(private readonly options: DevtoolsModelOptions = {}) {
    this.maxTimeline = options.maxTimelineEntries ?? 300;
    this.updateEveryMs = options.updateEveryMs ?? 100;
  }

  /** Starts watching every chat on the page; the returned function stops (and forgets them). */
  start(): () => void {
    if (this.detach === undefined) {
      const tap: InspectionTap = {
        chatAdded: (chat) => this.add(chat),
        chatRemoved: (chat) => this.release(chat),
        event: (event) => {
          const at = Date.now();
          for (const entry of this.live(event.chatId)) {
            entry.recorder.event(event);
            const line = eventLine(event, at);
            if (line !== undefined) this.push(entry, line);
          }
        },
        note: (chatId, note, at) => {
          for (const entry of this.live(chatId)) {
            entry.recorder.note(note);
            const line = noteLine(note, at);
            if (line !== undefined) this.push(entry, line);
          }
        },
        fetch: (request, send) => {
          const entry = this.live(request.chatId)[0];
          return entry === undefined ? send() : entry.recorder.exchange(request, send);
        },
      };
      this.detach = attachInspector(tap);
      for (const chat of inspectableChats()) this.add(chat);
      this.changed();
    }
    return () => this.stop();
  }

  private stop(): void {
    this.detach?.();
    this.detach = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const entry of this.entries) entry.unsubscribe();
    this.entries.length = 0;
    this.snapshot = { chats: [] };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): DevtoolsSnapshot => this.snapshot;

  /** The chat's recording since the panel started watching it (tokens redacted). */
  exportRecording(key: number): SessionRecording | undefined {
    return this.entries.find((entry) => entry.key === key)?.recorder.export();
  }

  /** Empties a chat's timeline (its recording goes on). */
  clearTimeline(key: number): void {
    const entry = this.entries.find((candidate) => candidate.key === key);
    if (entry === undefined) return;
    entry.timeline = [];
    this.changed();
  }

  private live(chatId: string): Entry[] {
    return this.entries.filter((entry) => !entry.released && entry.chat.chatId === chatId);
  }

  private add(chat: InspectableChat): void {
    if (this.entries.some((entry) => entry.chat === chat)) return;
    const key = this.nextKey++;
    const entry: Entry = {
      key,
      chat,
      timeline: [],
      released: false,
      unsubscribe: chat.store.subscribe(() => this.changed()),
      recorder: new ChatRecorder(chat.chatId, this.options.recording, (exchange, step) => {
        const line = exchangeLine(exchange, step, entry.recorder.startedAt, chat.getState().lastEventId);
        if (line !== undefined) this.push(entry, line);
      }),
    };
    this.entries.push(entry);
    this.changed();
  }

  private release(chat: InspectableChat): void {
    const entry = this.entries.find((candidate) => candidate.chat === chat);
    if (entry === undefined) return;
    entry.released = true;
    entry.unsubscribe();
    const released = this.entries.filter((candidate) => candidate.released);
    if (released.length > MAX_RELEASED) this.entries.splice(this.entries.indexOf(released[0] as Entry), 1);
    this.changed();
  }

  private push(entry: Entry, line: TimelineEntry): void {
    entry.timeline.push(line);
    if (entry.timeline.length > this.maxTimeline)
      entry.timeline.splice(0, entry.timeline.length - this.maxTimeline);
    this.changed();
  }

  private changed(): void {
    if (this.detach === undefined || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.publish();
    }, this.updateEveryMs);
  }

  private publish(): void {
    this.snapshot = { chats: this.entries.map((entry) => inspect(entry)) };
    for (const listener of this.listeners) listener();
  }
}

function inspect(entry: Entry): ChatInspection {
  const state = entry.chat.getState();
  const remembered = rememberedOf(entry.chat);
  return {
    key: entry.key,
    chatId: state.chatId,
    sessionId: state.sessionId,
    statusLabel: remembered.label,
    connection: state.status.type,
    cursor: state.lastEventId,
    turnLive: state.turnLive,
    turnInSeq: state.turnInSeq,
    runId: state.runId,
    tab: remembered.tab,
    tokenExpiresAt: state.tokenExpiresAt,
    closed: state.closed,
    closedReason: state.closedReason,
    lastError:
      state.lastError === undefined
        ? undefined
        : { code: state.lastError.code, message: state.lastError.message },
    released: entry.released,
    timeline: [...entry.timeline],
  };
}
