import type { TokenClaims } from '../protocol/types.js';
import type { SessionEvent } from './events.js';
import type { ChatSessionState, SessionStore } from './session-store.js';

/**
 * What an inspector (the devtools panel, a recorder) hears beyond `SessionEvent`: the steps
 * that have no public event because an app has no use for them. Never carries a token: only
 * what a token says (`expiresAt`, `scopes`).
 */
export type InspectionNote =
  /** The app's `startSession` answered (first start, a refresh, a 404 repair). */
  | {
      type: 'session-started';
      sessionId: string | undefined;
      isCached: boolean | undefined;
      currentRunId: string | null | undefined;
      token: TokenFacts | undefined;
    }
  /** The app's `getAccessToken` answered. */
  | { type: 'token-fetched'; token: TokenFacts | undefined }
  /** An append failed and is tried again after `delayMs`. */
  | { type: 'append-retrying'; attempt: number; delayMs: number; code: string }
  /** A stream-store command record on `.out` (`trim`: the records before it may go). */
  | { type: 'command'; operation: string; seqNum: number }
  /** A silent live turn asked whether its run lives. */
  | { type: 'liveness-check'; runId: string | null | undefined; verdict: 'alive' | 'gone' | 'unknown' }
  /** This tab's part in the chat's live turn (React's tab coordination). */
  | { type: 'tab-state'; mode: string; owner: boolean; following: boolean }
  /** What `session.statusLabel` says now (React hooks). */
  | { type: 'status-label'; label: string };

/** What a token says about itself, without the token. */
export interface TokenFacts {
  expiresAt: number | undefined;
  scopes: string[] | undefined;
}

/** The part of a `SessionClient` an inspector may read: identity and its store. */
export interface InspectableChat {
  readonly chatId: string;
  readonly store: SessionStore;
  getState(): ChatSessionState;
}

/** A request on the session's wire, for a tap to observe. */
export interface TappedRequest {
  chatId: string;
  url: string;
  init: RequestInit;
}

/**
 * An inspector attached to the hub. `fetch` wraps the request it is given: it must call
 * `send` exactly once and answer what `send` answered (it may wrap the body to observe it).
 */
export interface InspectionTap {
  chatAdded?(chat: InspectableChat): void;
  chatRemoved?(chat: InspectableChat): void;
  event?(event: SessionEvent): void;
  note?(chatId: string, note: InspectionNote, at: number): void;
  fetch?(request: TappedRequest, send: () => Promise<Response>): Promise<Response>;
}

interface InspectionHub {
  readonly chats: Set<WeakRef<InspectableChat>>;
  readonly taps: Set<InspectionTap>;
  /** What the React layer last said of a chat (its `statusLabel`, its tab's part). */
  readonly remembered: WeakMap<InspectableChat, RememberedFacts>;
}

// One hub per page, shared by every copy of the package (two installs, a dev server's bundle
// and the app's), so a panel imported from one copy sees the chats of the other.
const HUB_KEY = Symbol.for('durable-chat.inspection-hub');

function hub(): InspectionHub {
  const host = globalThis as { [HUB_KEY]?: InspectionHub };
  let found = host[HUB_KEY];
  if (found === undefined) {
    found = { chats: new Set(), taps: new Set(), remembered: new WeakMap() };
    host[HUB_KEY] = found;
  }
  return found;
}

const HUB = hub();

/**
 * True while an inspector is attached. Every tap point checks this first, so with none
 * attached inspection costs one property read per request or event, nothing per chunk.
 */
export function isInspected(): boolean {
  return HUB.taps.size !== 0;
}

/** Makes a chat visible to inspectors; the returned function removes it (on `close()`). */
export function registerInspectable(chat: InspectableChat): () => void {
  // A weak reference: a chat the app drops without closing is not kept alive by the hub.
  const ref = new WeakRef(chat);
  HUB.chats.add(ref);
  // Chats dropped without `close()` leave empty references: swept now and then, not kept.
  if (HUB.chats.size % 64 === 0) inspectableChats();
  for (const tap of HUB.taps) tap.chatAdded?.(chat);
  return () => {
    if (!HUB.chats.delete(ref)) return;
    for (const tap of HUB.taps) tap.chatRemoved?.(chat);
  };
}

/** The chats alive on this page, oldest first. */
export function inspectableChats(): InspectableChat[] {
  const chats: InspectableChat[] = [];
  for (const ref of HUB.chats) {
    const chat = ref.deref();
    if (chat === undefined) HUB.chats.delete(ref);
    else chats.push(chat);
  }
  return chats;
}

/** Attaches an inspector; the returned function detaches it. */
export function attachInspector(tap: InspectionTap): () => void {
  HUB.taps.add(tap);
  return () => {
    HUB.taps.delete(tap);
  };
}

export function inspectEvent(event: SessionEvent): void {
  for (const tap of HUB.taps) tap.event?.(event);
}

export function inspectNote(chatId: string, note: InspectionNote, at: number): void {
  for (const tap of HUB.taps) tap.note?.(chatId, note, at);
}

/** Sends a request through every attached tap's `fetch` (outermost first). */
export function inspectFetch(request: TappedRequest, send: () => Promise<Response>): Promise<Response> {
  let next = send;
  for (const tap of HUB.taps) {
    const wrap = tap.fetch;
    if (wrap === undefined) continue;
    const inner = next;
    next = () => wrap.call(tap, request, inner);
  }
  return next();
}

/** What the React layer says of a chat that the core cannot know. */
export interface RememberedFacts {
  /** The hooks' `statusLabel`. */
  label?: string;
  /** This tab's part in the live turn. */
  tab?: { mode: string; owner: boolean; following: boolean };
}

function remember(chat: InspectableChat): RememberedFacts {
  let facts = HUB.remembered.get(chat);
  if (facts === undefined) {
    facts = {};
    HUB.remembered.set(chat, facts);
  }
  return facts;
}

/**
 * The hooks' `statusLabel` for a chat, kept (one weak entry per chat, written per status
 * change) so an inspector attached later shows it at once; attached ones hear it as a note.
 */
export function noteStatusLabel(chat: InspectableChat, label: string, at: number): void {
  const facts = remember(chat);
  if (facts.label === label) return;
  facts.label = label;
  if (HUB.taps.size !== 0) inspectNote(chat.chatId, { type: 'status-label', label }, at);
}

/** This tab's part in the chat's live turn, kept and told like `noteStatusLabel`. */
export function noteTabState(
  chat: InspectableChat,
  tab: NonNullable<RememberedFacts['tab']>,
  at: number,
): void {
  remember(chat).tab = { ...tab };
  if (HUB.taps.size !== 0) inspectNote(chat.chatId, { type: 'tab-state', ...tab }, at);
}

export function rememberedOf(chat: InspectableChat): RememberedFacts {
  return { ...HUB.remembered.get(chat) };
}

/** `TokenFacts` of a token, for a note. */
export function tokenFacts(claims: TokenClaims | undefined): TokenFacts | undefined {
  if (claims === undefined) return undefined;
  return { expiresAt: claims.exp === undefined ? undefined : claims.exp * 1000, scopes: claims.scopes };
}
