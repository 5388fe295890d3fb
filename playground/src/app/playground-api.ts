import { ConnectionError, httpErrorFromResponse, ProtocolError } from 'durable-chat';
import type { FaultName } from '../shared/fault-names.js';

export type { FaultName };

/** What the playground host tells the page at load. */
export interface PlaygroundConfig {
  mode: 'local' | 'remote';
  /** Base URL of the session service the browser talks to. */
  baseURL: string;
  taskIdentifier: string;
  /** Fault buttons work only against the bundled dev server. */
  faults: boolean;
  /** The host serves a head-start route (local mode: its reply comes from a mock model). */
  headStart: boolean;
  /** Changes whenever the playground host restarts. */
  instance: string;
}

export const CONFIG_PATH = '/playground/config';
export const FAULTS_PATH = '/playground/faults';
export const CHAT_ROUTE_PATH = '/api/chat-session';
export const HEAD_START_PATH = '/api/chat/head-start';

async function requestJson(path: string, init: RequestInit, operation: string): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { accept: 'application/json', ...init.headers } });
  } catch (cause) {
    throw new ConnectionError({ code: 'NETWORK_ERROR', message: `${operation}: the request failed`, cause });
  }
  const body: unknown = await response.json().catch((cause: unknown) => {
    throw new ProtocolError({ code: 'UNEXPECTED_RESPONSE', message: `${operation}: not JSON`, cause });
  });
  if (!response.ok) throw httpErrorFromResponse({ status: response.status, operation, body });
  return body;
}

export async function loadPlaygroundConfig(): Promise<PlaygroundConfig> {
  const body = (await requestJson(CONFIG_PATH, {}, 'load playground config')) as Partial<PlaygroundConfig>;
  if (
    typeof body.baseURL !== 'string' ||
    typeof body.taskIdentifier !== 'string' ||
    typeof body.instance !== 'string'
  ) {
    throw new ProtocolError({ code: 'UNEXPECTED_RESPONSE', message: 'playground config: missing fields' });
  }
  return {
    mode: body.mode === 'remote' ? 'remote' : 'local',
    baseURL: body.baseURL,
    taskIdentifier: body.taskIdentifier,
    faults: body.faults === true,
    headStart: body.headStart === true,
    instance: body.instance,
  };
}

/** Asks the host to break something; resolves with what it did, in words. */
export async function injectFault(fault: FaultName): Promise<string> {
  const body = await requestJson(
    FAULTS_PATH,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault }) },
    `inject ${fault}`,
  );
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  return typeof detail === 'string' ? detail : '';
}
