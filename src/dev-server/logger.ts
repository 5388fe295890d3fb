/** Where the dev server reports what it cannot answer over HTTP (agent failures, I/O errors). */
export interface DevServerLogger {
  warn(message: string, error?: unknown): void;
}

export const consoleLogger: DevServerLogger = {
  warn(message, error) {
    if (error === undefined) console.warn(`[durable-chat dev] ${message}`);
    else console.warn(`[durable-chat dev] ${message}`, error);
  },
};
