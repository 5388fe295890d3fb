import { useChat } from '@ai-sdk/react';
import type { UIMessage } from 'ai';
import { DurableChatError } from 'durable-chat';
import { type ChatSessionOptions, useChatSession, useDurableChat } from 'durable-chat/react';
import { Window } from 'happy-dom';
import { createElement, useLayoutEffect } from 'react';
import { userMessage } from '../clients/client-variant.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import { buildDeltas, chatIdFor, expectedReply } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { median, percentile } from '../stats.js';
import { verifyMessage } from '../verify-turn.js';
import { arrivalClock } from './arrival-clock.js';

/** The two React paths: the all-in-one hook, and the AI SDK's `useChat` over `useChatSession`. */
export type RendersPath = 'useDurableChat' | 'useChat';

export interface RendersJob {
  kind: 'renders';
  baseUrl: string;
  /** A paced turn, so the throttle (a time window) meets a realistic chunk rate. */
  turn: ServedTurnSpec;
  path: RendersPath;
  /** The path's `throttle` option; undefined: its default. */
  throttleMs: number | undefined;
}

export interface LatencySummary {
  medianMs: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface RendersResult {
  renders: number;
  /** React commits of the probe from the send to the final render (a render React threw away is not one). */
  commits: number;
  /** From the first text delta's arrival to the last one's (ms). */
  streamMs: number;
  /** From the first commit showing reply text to the last commit that grew it (ms): the span the window paces. */
  textCommitSpanMs: number;
  chunks: number;
  wallMs: number;
  /** Text deltas per second as they reached the client (first to last arrival). */
  deltasPerSecond: number;
  /** The worker's CPU (user + system) from the send to the final render, per chunk. */
  cpuUsPerChunk: number;
  /** Per text delta: from its arrival at the client to the first committed render holding it. */
  addedLatency: LatencySummary;
}

const POLL_MS = 5;
const TURN_TIMEOUT_MS = 120_000;

function installDom(): HTMLElement {
  const window = new Window({ url: 'http://localhost/' });
  const globals = globalThis as Record<string, unknown>;
  globals.window = window;
  globals.document = window.document;
  if (globals.navigator === undefined) globals.navigator = window.navigator;
  // React reads this to decide whether to warn about updates outside act(): we want none.
  globals.IS_REACT_ACT_ENVIRONMENT = false;
  return window.document.body as unknown as HTMLElement;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + TURN_TIMEOUT_MS;
  while (!condition()) {
    if (performance.now() > deadline) {
      throw new DurableChatError({
        code: 'UNEXPECTED_RESPONSE',
        message: `renders: timed out waiting for ${what}`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** What the probe saw on each render, and when each commit happened with how much reply text. */
interface Seen {
  messages: UIMessage[];
  status: string;
  sendMessage: (message: UIMessage) => Promise<void>;
}

interface ProbeProps {
  session: ChatSessionOptions;
  path: RendersPath;
  throttleMs: number | undefined;
  onRender: (seen: Seen) => void;
  /** Runs after every commit of the probe (a layout effect without dependencies). */
  onCommit: (textLength: number) => void;
}

function replyTextLength(messages: UIMessage[]): number {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant') return 0;
  let length = 0;
  for (const part of last.parts) if (part.type === 'text') length += part.text.length;
  return length;
}

/** Renders nothing; reports every render and every commit (with the reply's text length). */
function DurableProbe({ session, throttleMs, onRender, onCommit }: ProbeProps): null {
  const helpers = useDurableChat<UIMessage>({
    ...session,
    ...(throttleMs === undefined ? {} : { throttle: throttleMs }),
  });
  onRender({ messages: helpers.messages, status: helpers.status, sendMessage: helpers.sendMessage });
  const length = replyTextLength(helpers.messages);
  useLayoutEffect(() => onCommit(length));
  return null;
}

function PlainProbe({ session, throttleMs, onRender, onCommit }: ProbeProps): null {
  const chatSession = useChatSession({
    ...session,
    ...(throttleMs === undefined ? {} : { throttle: throttleMs }),
  } as ChatSessionOptions);
  const chat = useChat({ id: chatSession.id, transport: chatSession.transport });
  onRender({ messages: chat.messages, status: chat.status, sendMessage: chat.sendMessage });
  const length = replyTextLength(chat.messages);
  useLayoutEffect(() => onCommit(length));
  return null;
}

function textSpan(commits: { at: number; length: number }[]): number {
  const shown = commits.filter((commit) => commit.length > 0);
  const first = shown[0];
  const last = shown[shown.length - 1];
  return first === undefined || last === undefined ? 0 : last.at - first.at;
}

function summarize(values: number[]): LatencySummary {
  return {
    medianMs: median(values),
    p95Ms: percentile(values, 0.95),
    p99Ms: percentile(values, 0.99),
    maxMs: Math.max(...values),
  };
}

/**
 * Scenario 5: a real React root (happy-dom) rendering one React path; one send; renders
 * counted from the send to the final message, which must hold the turn's exact text. Each
 * delta's added latency runs from the moment its record's bytes reached the client to the
 * first commit whose reply text reaches the end of that delta.
 */
export async function runRendersJob(job: RendersJob): Promise<RendersResult> {
  const container = installDom();
  // Loaded after the DOM exists: react-dom reads the globals when it loads.
  const { createRoot } = await import('react-dom/client');
  const chatId = chatIdFor(
    job.turn.name,
    `renders-${process.pid}-${job.path}-${job.throttleMs ?? 'default'}`,
  );
  const { publicAccessToken } = await createSession(job.baseUrl, chatId);
  const clock = arrivalClock();
  const session: ChatSessionOptions = {
    chatId,
    baseURL: job.baseUrl,
    taskIdentifier: 'bench',
    startSession: async () => ({ publicAccessToken }),
    fetch: clock.fetch,
    persistence: false,
    tabs: false,
  };
  let renders = 0;
  let commitCount = 0;
  let latest: Seen | undefined;
  const commits: { at: number; length: number }[] = [];
  const onRender = (seen: Seen) => {
    renders++;
    latest = seen;
  };
  const onCommit = (length: number) => {
    commitCount++;
    const previous = commits[commits.length - 1];
    if (previous === undefined || previous.length !== length) commits.push({ at: performance.now(), length });
  };
  const root = createRoot(container);
  const probe = job.path === 'useDurableChat' ? DurableProbe : PlainProbe;
  root.render(
    createElement(probe, {
      session: job.path === 'useDurableChat' ? { ...session, resume: false } : session,
      path: job.path,
      throttleMs: job.throttleMs,
      onRender,
      onCommit,
    } as ProbeProps),
  );
  await until(() => latest !== undefined, 'the first render');

  const expected = expectedReply(job.turn);
  const before = renders;
  const commitsBefore = commitCount;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await latest?.sendMessage(userMessage('hello'));
  const reply = () => {
    const message = latest?.messages[latest.messages.length - 1];
    return message?.role === 'assistant' ? message : undefined;
  };
  await until(
    () => latest?.status === 'ready' && (reply()?.parts.some((part) => part.type === 'text') ?? false),
    'the reply',
  );
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const counted = renders - before;
  const committed = commitCount - commitsBefore;
  verifyMessage(`renders/${job.path}/${job.throttleMs ?? 'default'}`, expected, reply());
  root.unmount();

  const { arrivals } = clock;
  if (arrivals.length !== expected.deltas) {
    throw new DurableChatError({
      code: 'UNEXPECTED_RESPONSE',
      message: `renders: saw ${arrivals.length} text-delta records arrive, expected ${expected.deltas}`,
    });
  }
  const latencies: number[] = [];
  let end = 0;
  let commit = 0;
  for (const [index, delta] of buildDeltas(job.turn.deltas, job.turn.seed ?? 42).entries()) {
    end += delta.length;
    while (commit < commits.length && (commits[commit]?.length ?? 0) < end) commit++;
    const shown = commits[commit];
    const arrived = arrivals[index];
    if (shown === undefined || arrived === undefined) {
      throw new DurableChatError({
        code: 'UNEXPECTED_RESPONSE',
        message: `renders: delta ${index} was never committed`,
      });
    }
    latencies.push(Math.max(0, shown.at - arrived));
  }
  const first = arrivals[0] ?? 0;
  const last = arrivals[arrivals.length - 1] ?? first;
  return {
    renders: counted,
    commits: committed,
    streamMs: last - first,
    // `commits` holds one entry per change of the text length, the first at length 0.
    textCommitSpanMs: textSpan(commits),
    chunks: expected.chunkCount,
    wallMs,
    cpuUsPerChunk: (cpu.user + cpu.system) / expected.chunkCount,
    deltasPerSecond: last > first ? (arrivals.length - 1) / ((last - first) / 1000) : Number.NaN,
    addedLatency: summarize(latencies),
  };
}
