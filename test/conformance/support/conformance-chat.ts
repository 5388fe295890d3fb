import { assert, expect } from 'vitest';
import type {
  ChatInputChunk,
  CreateSessionRequest,
  CreateSessionResponse,
} from '../../../src/protocol/index.js';
import { userMessageChunk } from '../../../src/protocol/index.js';
import type { ResolvedConformanceTarget } from './conformance-target.js';
import type { ProtocolClient, WireResponse } from './protocol-client.js';
import { type OutRead, type ReadOutOptions, readOut } from './read-out.js';
import { findTurn, type Turn } from './turn.js';

let counter = 0;

/** A chat id no other run of the suite uses (the target may be shared and long-lived). */
export function uniqueChatId(label = 'chat'): string {
  counter += 1;
  const random = Math.random().toString(36).slice(2, 8);
  return `conformance-${label}-${Date.now().toString(36)}-${counter}-${random}`;
}

export function userMessage(text: string, id = `msg-${uniqueChatId('m')}`) {
  return { id, role: 'user' as const, parts: [{ type: 'text' as const, text }] };
}

/** A valid create body: preload first run, the target's metadata. `null`: no externalId. */
export function createBody(
  target: ResolvedConformanceTarget,
  externalId: string | null = uniqueChatId(),
): CreateSessionRequest {
  const body: CreateSessionRequest = {
    type: 'chat.agent',
    taskIdentifier: target.taskIdentifier,
    triggerConfig: {
      basePayload: { chatId: externalId ?? uniqueChatId('anon'), trigger: 'preload' },
    },
  };
  if (target.options.metadata !== undefined)
    body.triggerConfig.basePayload.metadata = target.options.metadata;
  if (externalId !== null) body.externalId = externalId;
  return body;
}

/**
 * One live session driven through the protocol: appends with its token, reads `.out` from
 * its own cursor and finds the turn-complete that answers each send.
 */
export class ConformanceChat {
  /** `seq_num` of the last record this chat has read (the `Last-Event-ID` to resume from). */
  cursor: number | undefined;

  constructor(
    readonly target: ResolvedConformanceTarget,
    readonly client: ProtocolClient,
    readonly created: CreateSessionResponse,
    public token: string,
  ) {}

  get id(): string {
    return this.created.id;
  }

  get externalId(): string {
    const externalId = this.created.externalId;
    assert(externalId !== null, 'this chat was created with an externalId');
    return externalId;
  }

  static async open(
    target: ResolvedConformanceTarget,
    client: ProtocolClient,
    mutate: (body: CreateSessionRequest) => void = () => {},
  ): Promise<ConformanceChat> {
    const body = createBody(target);
    mutate(body);
    const response = await client.createSession(body);
    expect(response.status, `create: ${response.text.slice(0, 300)}`).toBe(201);
    const created = response.body as unknown as CreateSessionResponse;
    return new ConformanceChat(target, client, created, created.publicAccessToken);
  }

  async append(chunk: ChatInputChunk | unknown, options: { partId?: string; token?: string | null } = {}) {
    const token = options.token === undefined ? this.token : options.token;
    return this.client.append(this.externalId, chunk, { token, partId: options.partId });
  }

  messageChunk(text: string, metadata: unknown = this.target.options.metadata): ChatInputChunk {
    return userMessageChunk({ chatId: this.externalId, message: userMessage(text), metadata });
  }

  read(options: Partial<ReadOutOptions> = {}): Promise<OutRead> {
    return readOut({ baseURL: this.target.baseURL, session: this.externalId, token: this.token, ...options });
  }

  /** Reads from the cursor until the turn-complete that answers `appendSeq`, then moves the cursor. */
  async awaitTurn(options: { appendSeq?: number; maxMs?: number } = {}): Promise<Turn> {
    const read = await this.read({
      lastEventId: this.cursor,
      until: (progress) => findTurn(progress.records, options.appendSeq) !== undefined,
      maxMs: options.maxMs ?? 15_000,
    });
    expect(read.status, read.refusalText.slice(0, 300)).toBe(200);
    const turn = findTurn(read.records, options.appendSeq);
    if (turn === undefined) {
      assert.fail(
        `no turn-complete on .out after cursor ${this.cursor} (read ended: ${read.ending}, ` +
          `${read.records.length} records, kinds ${read.records.map((record) => record.kind).join(',')})`,
      );
    }
    this.cursor = turn.turnComplete.seqNum;
    if (turn.turnComplete.publicAccessToken !== undefined) this.token = turn.turnComplete.publicAccessToken;
    return turn;
  }

  /** Appends a user message (200 expected) and returns its turn. */
  async send(text: string, metadata?: unknown): Promise<{ append: WireResponse; turn: Turn }> {
    const append = await this.append(this.messageChunk(text, metadata ?? this.target.options.metadata));
    expect(append.status, append.text.slice(0, 300)).toBe(200);
    const seq = typeof append.body?.seq === 'number' ? append.body.seq : undefined;
    return { append, turn: await this.awaitTurn({ appendSeq: seq }) };
  }
}
