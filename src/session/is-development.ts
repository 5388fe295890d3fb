/**
 * Development builds only (dev-time warnings). Bundlers replace the literal
 * `process.env.NODE_ENV` in browser builds, where `process` itself does not exist, so it is read
 * first and their replacement decides; an unbundled page (no `process`, or a shim without `env`)
 * counts as development.
 */
export function isDevelopment(): boolean {
  try {
    return process.env.NODE_ENV !== 'production';
  } catch {
    return true;
  }
}
