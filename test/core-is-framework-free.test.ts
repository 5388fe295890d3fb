import { describe, expect, it, vi } from 'vitest';

// If anything the core entry loads touches React, these factories throw and the import fails.
vi.mock('react', () => {
  throw new Error('the core entry imported react');
});
vi.mock('react-dom', () => {
  throw new Error('the core entry imported react-dom');
});
vi.mock('@ai-sdk/react', () => {
  throw new Error('the core entry imported @ai-sdk/react');
});

describe('durable-chat core entry', () => {
  it('loads without React', async () => {
    const core = await import('../src/index.js');
    expect(typeof core.createOutStreamDecoder).toBe('function');
    expect(typeof core.isDurableChatError).toBe('function');
  });
});

describe('the session core (src/session)', () => {
  it('loads without React: the hooks of durable-chat/react are a binding over it', async () => {
    const session = await import('../src/session/chat-session-handle.js');
    expect(typeof session.ChatSessionHandle).toBe('function');
  });
});
