import type { DurableChatError } from '../../../src/errors/durable-chat-error.js';

/** Awaits a call that must reject and returns its error; a call that resolves fails the test. */
export async function failure(promise: Promise<unknown>): Promise<DurableChatError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error === undefined) throw new Error('expected the call to fail');
  return error as DurableChatError;
}
