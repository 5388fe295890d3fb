import type { UIMessage } from 'ai';
import { DurableChatError } from 'durable-chat';
import { type UseDurableChatResult, useDurableChat } from 'durable-chat/react';
import { Window } from 'happy-dom';
import { createElement } from 'react';
import { userMessage } from '../clients/client-variant.js';
import type { ServedTurnSpec } from '../fixture-server.js';
import { chatIdFor, expectedReply } from '../fixture-turn.js';
import { createSession } from '../session-setup.js';
import { verifyMessage } from '../verify-turn.js';

export interface RendersJob {
  kind: 'renders';
  baseUrl: string;
  /** A paced turn, so the throttle (a time window) meets a realistic chunk rate. */
  turn: ServedTurnSpec;
  /** `experimental_throttle`; undefined: the hook's default. */
  throttleMs: number | undefined;
}

export interface RendersResult {
  renders: number;
  chunks: number;
  wallMs: number;
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

interface ProbeProps {
  chatId: string;
  baseUrl: string;
  token: string;
  throttleMs: number | undefined;
  onRender: (helpers: UseDurableChatResult<UIMessage>) => void;
}

/** Renders nothing; reports every render of the hook to the job. */
function Probe({ chatId, baseUrl, token, throttleMs, onRender }: ProbeProps): null {
  const helpers = useDurableChat<UIMessage>({
    chatId,
    baseURL: baseUrl,
    taskIdentifier: 'bench',
    startSession: async () => ({ publicAccessToken: token }),
    persistence: false,
    tabs: false,
    resume: false,
    ...(throttleMs === undefined ? {} : { experimental_throttle: throttleMs }),
  });
  onRender(helpers);
  return null;
}

/**
 * Scenario 5: a real React root (happy-dom) rendering `useDurableChat`; one send; renders
 * counted from the send to the final message, which must hold the turn's exact text.
 */
export async function runRendersJob(job: RendersJob): Promise<RendersResult> {
  const container = installDom();
  // Loaded after the DOM exists: react-dom reads the globals when it loads.
  const { createRoot } = await import('react-dom/client');
  const chatId = chatIdFor(job.turn.name, `renders-${process.pid}-${job.throttleMs ?? 'default'}`);
  const { publicAccessToken } = await createSession(job.baseUrl, chatId);
  let renders = 0;
  let latest: UseDurableChatResult<UIMessage> | undefined;
  const onRender = (helpers: UseDurableChatResult<UIMessage>) => {
    renders++;
    latest = helpers;
  };
  const root = createRoot(container);
  root.render(
    createElement(Probe, {
      chatId,
      baseUrl: job.baseUrl,
      token: publicAccessToken,
      throttleMs: job.throttleMs,
      onRender,
    }),
  );
  await until(() => latest !== undefined, 'the first render');

  const expected = expectedReply(job.turn);
  const before = renders;
  const started = performance.now();
  await latest?.sendMessage(userMessage('hello'));
  const lastText = () => {
    const message = latest?.messages[latest.messages.length - 1];
    return message?.role === 'assistant' ? message : undefined;
  };
  await until(
    () => latest?.status === 'ready' && (lastText()?.parts.some((part) => part.type === 'text') ?? false),
    'the reply',
  );
  const wallMs = performance.now() - started;
  const counted = renders - before;
  verifyMessage(`renders/${job.throttleMs ?? 'default'}`, expected, lastText());
  root.unmount();
  return { renders: counted, chunks: expected.chunkCount, wallMs };
}
