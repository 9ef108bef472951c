// The webhook logs through whatever logger the operator hands it (its structured JSON logger
// satisfies this interface); standalone use and tests fall back to a minimal JSON-lines logger.

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const noop = () => undefined;

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

const levels = ['debug', 'info', 'warn', 'error'] as const;

/** JSON lines on stderr at `level` and above (`NLS_LOG_LEVEL` semantics: debug, info, warn, error). */
export function jsonLogger(level: string | undefined): Logger {
  const index = levels.indexOf((level ?? '').toLowerCase() as (typeof levels)[number]);
  const min = index < 0 ? 1 : index;
  const at =
    (index: number) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      if (index < min) return;
      process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: levels[index], component: 'webhook', msg, ...fields })}\n`);
    };
  return { debug: at(0), info: at(1), warn: at(2), error: at(3) };
}
