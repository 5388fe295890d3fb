import type { UIMessage } from 'ai';
import type { SessionEventHandler } from '../client/events.js';
import type { HistoryCursor } from '../client/history-cursor.js';
import type { SessionChatTransportOptions } from '../transport/transport-options.js';
import type { PersistenceOption } from './browser-persistence.js';
import type { TabCoordinationOptions } from './tab-coordinator.js';

/** Options of `useChatSession` (and the session part of `useDurableChat`). */
export interface ChatSessionOptions extends Omit<SessionChatTransportOptions, 'persistence'> {
  /** The chat (the session's `externalId`). Changing it switches to another chat's session. */
  chatId: string;
  /** Where the chat's record survives reloads. Default `'local'` (localStorage). */
  persistence?: PersistenceOption;
  /** Key prefix for `'local'` / `'session'` persistence. Default `durable-chat:`. */
  storagePrefix?: string;
  /**
   * Whose record this is, e.g. the signed-in user's id: part of the storage key, and only
   * then does the record keep the session token (used again by this scope alone, so a reload
   * resumes without asking the route). Without it the record keeps no token and a reloaded
   * page is authorized by the route once. Changing it switches sessions.
   */
  scope?: string;
  /**
   * Where the transcript you pass to `useChat` as `messages` ends on `.out`: what
   * `historyCursor(session.source.getState())` returned when you saved those messages. When
   * this browser's own record of the chat is missing or behind it (another device, cleared
   * storage), the chat reads on from there: a reply that was live (or ended) while the page
   * was away shows once, nothing before it replays. Read once, when the chat's session is
   * created; see docs/react.md, "History".
   */
  historyCursor?: HistoryCursor;
  /** Closes the session on the app's server (e.g. `createRouteSessionCallbacks(...).closeSession`). Needed by `close()`. */
  closeSession?: (input: { chatId: string; reason?: string }) => Promise<void>;
  /** Tabs of one chat never both drive a turn. `false`: this tab acts alone. Default: Web Locks, else BroadcastChannel. */
  tabs?: TabCoordinationOptions | false;
  /**
   * The render window while a reply streams (ms). Default 40. Text and reasoning deltas
   * that come within a window of the last one shown are merged and handed to `useChat`
   * when it ends, so `useChat` renders at most about once per window and no delta waits
   * longer; the first delta after a pause and every other chunk go at once. `0` hands
   * over every chunk as it comes (then give `useChat` its own throttle, or it renders per chunk).
   */
  throttle?: number;
  /** Telemetry from the client and transport (read through a ref: a new function per render is fine). */
  onEvent?: SessionEventHandler;
}

/** Told to the chat when another tab started a turn this tab should show (read-only). */
export interface RemoteTurn<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The user's message of that turn, when the other tab sent one. */
  message: UI_MESSAGE | undefined;
}

/**
 * How another tab's turn ended on its screen (`turn-finished`): its reply, or none (stopped
 * before the first chunk), and the user message it answers. Every tab ends with this.
 */
export interface RemoteFinal<UI_MESSAGE extends UIMessage = UIMessage> {
  message: UI_MESSAGE | undefined;
  /** The id of the user message the turn answers (absent from tabs of an older version). */
  answers: string | undefined;
  /** The ids of the owner's transcript then, in its order (absent from tabs of an older version). */
  order?: string[] | undefined;
}

/** This tab's part in the chat. */
export interface TabState {
  mode: 'locks' | 'broadcast' | 'none';
  /** This tab owns the live turn (it sent it, or took it over from a tab that went away). */
  owner: boolean;
  /** Another tab owns the live turn; this tab shows it read-only. */
  following: boolean;
}

/**
 * How a persistence option takes part in the session's identity: the built-in choices by
 * name, an adapter by its declared `id`. An adapter without one is never told apart by
 * object identity (an inline object is new on every render): the session keeps the first
 * one it was given (see `ChatSessionHandle.notePersistence`).
 */
export function persistenceIdentity(persistence: ChatSessionOptions['persistence']): string {
  if (typeof persistence !== 'object' || persistence === null) return String(persistence ?? 'local');
  return typeof persistence.id === 'string' ? `adapter:${persistence.id}` : 'adapter';
}

/** The options whose change means a different session: a new client and transport. */
export function sessionIdentity(options: ChatSessionOptions): string {
  return JSON.stringify([
    options.chatId,
    options.baseURL,
    options.taskIdentifier,
    persistenceIdentity(options.persistence),
    options.storagePrefix,
    options.scope,
  ]);
}
