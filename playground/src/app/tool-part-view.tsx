import { type DynamicToolUIPart, getToolOrDynamicToolName, type ToolUIPart } from 'ai';
import { useState } from 'react';

export interface ToolActions {
  /** False while a turn is live: an `input-available` tool then belongs to the agent. */
  canAnswer: boolean;
  respondToApproval(approvalId: string, approved: boolean): void;
  provideOutput(toolName: string, toolCallId: string, output: string): void;
}

function Json({ label, value }: { label: string; value: unknown }) {
  return (
    <pre>
      <span className="muted">{label} </span>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/**
 * One tool call: its input, then whatever it waits for. An approval request gets
 * Approve / Deny; a tool still at `input-available` once the turn has ended is one whose
 * output the user types.
 */
export function ToolPartView({
  part,
  actions,
}: {
  part: ToolUIPart | DynamicToolUIPart;
  actions: ToolActions;
}) {
  const name = getToolOrDynamicToolName(part);
  return (
    <div className="tool" data-testid="tool-part" data-tool={name} data-state={part.state}>
      <div>
        <strong>{name}</strong> <span className="muted">{part.state}</span>
      </div>
      {part.input !== undefined && <Json label="input" value={part.input} />}
      {part.state === 'approval-requested' && (
        <div className="actions">
          <button
            type="button"
            className="primary"
            data-testid="approve"
            onClick={() => actions.respondToApproval(part.approval.id, true)}
          >
            Approve
          </button>
          <button
            type="button"
            className="danger"
            data-testid="deny"
            onClick={() => actions.respondToApproval(part.approval.id, false)}
          >
            Deny
          </button>
        </div>
      )}
      {part.state === 'approval-responded' && (
        <div className="muted">{part.approval.approved ? 'approved' : 'denied'}; waiting for the agent</div>
      )}
      {part.state === 'input-available' && actions.canAnswer && (
        <ToolOutputForm
          options={optionsOf(part.input)}
          onSubmit={(output) => actions.provideOutput(name, part.toolCallId, output)}
        />
      )}
      {part.state === 'output-available' && <Json label="output" value={part.output} />}
      {part.state === 'output-denied' && <div className="muted">denied</div>}
      {part.state === 'output-error' && <div className="error-banner">{part.errorText}</div>}
    </div>
  );
}

/** A tool asking the user to choose gets one button per option. */
function optionsOf(input: unknown): string[] {
  const options = (input as { options?: unknown } | null)?.options;
  return Array.isArray(options)
    ? options.filter((option): option is string => typeof option === 'string')
    : [];
}

function ToolOutputForm({ options, onSubmit }: { options: string[]; onSubmit(output: string): void }) {
  const [value, setValue] = useState('');
  return (
    <>
      {options.length > 0 && (
        <div className="actions">
          {options.map((option) => (
            <button key={option} type="button" data-testid="tool-option" onClick={() => onSubmit(option)}>
              {option}
            </button>
          ))}
        </div>
      )}
      <form
        className="actions"
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() !== '') onSubmit(value.trim());
        }}
      >
        <input
          data-testid="tool-output-input"
          placeholder={options.length > 0 ? 'or type your own answer' : "Type the tool's answer"}
          value={value}
          onChange={(event) => setValue(event.target.value)}
        />
        <button type="submit" className="primary" data-testid="tool-output-submit">
          Send answer
        </button>
      </form>
    </>
  );
}
