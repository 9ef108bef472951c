// Structured JSON logs, one object per line on stdout. Secret material never reaches a log line:
// values under secret-looking keys are replaced, and strings that look like API keys, bearer
// tokens or PEM blocks are masked wherever they appear.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const levelOrder: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Keys whose values are always secret, whatever they contain. */
const secretKeyPattern = /(^|_|-|\.)(api[-_]?key|apikey|token|password|secret|credential|authorization|data|stringdata|tls\.key|private[-_]?key|key)$/i;

/** Value shapes that are secret wherever they appear in a string. */
const secretValuePatterns: RegExp[] = [
  /sk-[A-Za-z0-9_-]{8,}/g,
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----/g,
];

export const redacted = '[REDACTED]';

/** Masks secret-looking substrings of a string. */
export function redactString(value: string): string {
  let out = value;
  for (const pattern of secretValuePatterns) out = out.replace(pattern, redacted);
  return out;
}

/** A copy of `value` with secret fields and secret-looking strings masked (depth-limited). */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8) return '[…]';
  if (value instanceof Error) {
    return { name: value.name, message: redactString(value.message) };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = secretKeyPattern.test(k) && v !== null && v !== undefined && typeof v !== 'boolean' && typeof v !== 'number'
      ? redacted
      : redact(v, depth + 1);
  }
  return out;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** Lowest level written. @default 'info' */
  level?: LogLevel;
  /** Where lines go. @default process.stdout */
  write?: (line: string) => void;
  /** Fields added to every line. */
  fields?: Record<string, unknown>;
}

export function parseLogLevel(value: string | undefined): LogLevel {
  const v = (value ?? '').toLowerCase();
  return v === 'debug' || v === 'warn' || v === 'error' ? v : 'info';
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = levelOrder[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const base = options.fields ?? {};
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (levelOrder[level] < min) return;
    const entry = { ts: new Date().toISOString(), level, msg: redactString(msg), ...(redact({ ...base, ...fields }) as object) };
    write(JSON.stringify(entry));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}
