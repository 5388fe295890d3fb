import type { UIMessage } from 'ai';
import type { SessionRow } from '../../protocol/types.js';
import type { AnyAgent } from '../agents/define-agent.js';
import { InLog } from './in-log.js';
import { OutLog } from './out-log.js';

/** What a run was answering when it died: a continuation run resumes from it. */
export interface InFlightTurn {
  /** `.in` seq of the record being answered; null for the first run's basePayload message. */
  inSeq: number | null;
  /** The user message of that turn, if it had one. */
  message: UIMessage | undefined;
  /** True when the dead run's partial answer must be spliced rather than the turn re-run. */
  splice: boolean;
}

/** Minimal view of a live run that the session and the HTTP layer need. */
export interface LiveRun {
  readonly id: string;
  readonly state: RunState;
  readonly turns: number;
  /** Ends the run at once, as a crash or cancellation would. */
  terminate(reason: 'crash' | 'cancel' | 'shutdown'): void;
}

export type RunState = 'booting' | 'streaming' | 'idle' | 'suspended' | 'resuming' | 'exited';

/** One conversation: its row, both channels and the run hosting it. */
export class Session {
  readonly out = new OutLog();
  readonly in = new InLog();
  run: LiveRun | null = null;
  /** Last `.in` seq a turn-complete acknowledged (-1: none). */
  inAckSeq = -1;
  /** `seq_num` of the latest turn-complete on `.out` (the next trim goes back to it). */
  lastTurnCompleteSeq: number | null = null;
  inFlight: InFlightTurn | null = null;
  chatStarted = false;
  preloaded = false;
  runCount = 0;
  /** Id of the latest run, live or gone (a cached create returns it). */
  lastRunId: string | null = null;
  /** Fault injection: the next turn answers differently from the run an upgrade replaced. */
  divergeNextAnswer = false;
  readonly trimTimers = new Set<NodeJS.Timeout>();
  /** Open `.out` long polls, bounded per session (`maxStreamsPerSession`). */
  readonly streams = new Set<object>();

  constructor(
    public row: SessionRow,
    readonly agent: AnyAgent,
  ) {}

  /** The name tokens are minted for: the `externalId` when there is one. */
  get tokenKey(): string {
    return this.row.externalId ?? this.row.id;
  }

  get closed(): boolean {
    return this.row.closedAt !== null;
  }

  /**
   * Closes the session for good (idempotent: the first `closedAt` / `closedReason` stay).
   * The live run ends at once; `.out` stays readable.
   */
  close(reason: string | null): void {
    if (this.closed) return;
    this.row.closedAt = new Date().toISOString();
    this.row.closedReason = reason;
    this.touch();
    this.run?.terminate('shutdown');
  }

  touch(): void {
    this.row.updatedAt = new Date().toISOString();
  }

  dispose(): void {
    for (const timer of this.trimTimers) clearTimeout(timer);
    this.trimTimers.clear();
    this.run?.terminate('shutdown');
  }
}
