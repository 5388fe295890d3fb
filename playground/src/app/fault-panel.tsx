import { useState } from 'react';
import type { FaultName } from '../shared/fault-names.js';

const FAULTS: { name: FaultName; label: string; hint: string }[] = [
  {
    name: 'drop-connection',
    label: 'Drop connection',
    hint: 'cut the .out stream; the client resumes from its cursor',
  },
  {
    name: 'expire-token',
    label: 'Expire token',
    hint: 'revoke the session token; the client fetches a new one',
  },
  {
    name: 'crash-run',
    label: 'Crash run',
    hint: 'kill the agent run; the next message boots a continuation',
  },
];

/** Buttons that break things on the dev server, so a visitor can watch the client recover. */
export function FaultPanel(props: { enabled: boolean; inject(fault: FaultName): Promise<void> }) {
  const [busy, setBusy] = useState<FaultName | undefined>(undefined);
  return (
    <section className="panel" aria-label="Faults">
      <h2>Faults</h2>
      {!props.enabled && <p className="muted">Fault injection needs the local dev server.</p>}
      <div className="faults">
        {FAULTS.map((fault) => (
          <button
            key={fault.name}
            type="button"
            title={fault.hint}
            data-testid={`fault-${fault.name}`}
            disabled={!props.enabled || busy !== undefined}
            onClick={() => {
              setBusy(fault.name);
              props.inject(fault.name).finally(() => setBusy(undefined));
            }}
          >
            {fault.label}
          </button>
        ))}
      </div>
    </section>
  );
}
