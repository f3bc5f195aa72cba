/**
 * A tiny structured logger: one JSON object per line on stderr. It never receives request
 * headers, bodies or secret values; callers pass only what is safe to print.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Logger = Record<LogLevel, (msg: string, fields?: Record<string, unknown>) => void>;

const ORDER: Record<LogLevel | 'silent', number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 99,
};

export function createLogger(
  level: LogLevel | 'silent',
  write: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Logger {
  const make = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}
