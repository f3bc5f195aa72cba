/** Terminal output: colour only on a TTY and never with NO_COLOR; tables; errors without stack traces. */
import pc from 'picocolors';

const useColor =
  Boolean(process.stdout.isTTY) && !('NO_COLOR' in process.env) && process.env.TERM !== 'dumb';
export const c = pc.createColors(useColor);

export class CliError extends Error {
  readonly code: string;
  readonly details?: Record<string, unknown>;
  readonly hint?: string;
  constructor(
    message: string,
    code = 'cli_error',
    details?: Record<string, unknown>,
    hint?: string,
  ) {
    super(message);
    this.code = code;
    this.details = details;
    this.hint = hint;
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return c.dim('(none)');
  const cells = rows.map((r) =>
    columns.map((col) => (r[col] === null || r[col] === undefined ? '-' : String(r[col]))),
  );
  const widths = columns.map((col, i) =>
    Math.max(col.length, ...cells.map((row) => row[i]!.length)),
  );
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [c.bold(line(columns.map((col) => col.toUpperCase()))), ...cells.map(line)].join('\n');
}

export function printError(err: unknown): void {
  if (err instanceof CliError) {
    process.stderr.write(`${c.red('error')} ${c.bold(err.code)}: ${err.message}\n`);
    const fields = (err.details?.fields ?? undefined) as Record<string, string[]> | undefined;
    if (fields)
      for (const [k, msgs] of Object.entries(fields))
        process.stderr.write(`  ${c.yellow(k)}: ${msgs.join('; ')}\n`);
    else if (err.details && Object.keys(err.details).length)
      process.stderr.write(`  ${JSON.stringify(err.details)}\n`);
    if (err.hint) process.stderr.write(`${c.dim('hint:')} ${err.hint}\n`);
    return;
  }
  process.stderr.write(`${c.red('error')} ${err instanceof Error ? err.message : String(err)}\n`);
}
