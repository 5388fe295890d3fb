/** The fault buttons of the playground, shared by the page and the host. */
export const FAULT_NAMES = ['drop-connection', 'expire-token', 'crash-run'] as const;

export type FaultName = (typeof FAULT_NAMES)[number];
