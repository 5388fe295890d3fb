import type { UIMessage } from 'ai';
import type { SessionRow } from '../../protocol/types.js';
import type { AnyAgent } from '../agents/define-agent.js';
import { InLog, type InLogJournal } from './in-log.js';
import { OutLog, type OutLogJournal } from './out-log.js';

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

/** Where a session is kept between restarts (nothing: in memory only). */
export interface SessionJournal extends OutLogJournal, InLogJournal {
  /** The row or the run state changed: written with the next batch. */
  changed(): void;
  /** Settles once everything recorded so far is on disk; undefined when it already is. */
  durable(): Promise<void> | undefined;
}

/** One conversation: its row, both channels and the run hosting it. */
export class Session {
  readonly out = new OutLog();
  readonly in = new InLog();
  run: LiveRun | null = null;
  /** The turn a run is streaming: a restart finds it cut, as a crash would leave it. */
  liveTurn: { inSeq: number | null } | null = null;
  private journal: SessionJournal | undefined;
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
    this.changed();
  }

  /** Both logs and the state go to `journal` from now on. */
  keepIn(journal: SessionJournal): void {
    this.journal = journal;
    this.out.keepIn(journal);
    this.in.keepIn(journal);
  }

  /** The row or the run state changed (fields the logs do not carry): it is kept. */
  changed(): void {
    this.journal?.changed();
  }

  /**
   * Settles once everything the session recorded so far is durable; undefined when it
   * already is (in memory: always). Acknowledge nothing before it settles.
   */
  durable(): Promise<void> | undefined {
    return this.journal?.durable();
  }

  dispose(): void {
    for (const timer of this.trimTimers) clearTimeout(timer);
    this.trimTimers.clear();
    this.run?.terminate('shutdown');
  }
}
