/** Byte counts for people (the CLI, messages, and the console's page scripts, which embed this function's source). */

/** A byte count as people read it: 1.5 GiB, 300 MiB, 12 KiB, 900 bytes. */
export function formatBytes(n: number): string {
  const units = ['GiB', 'MiB', 'KiB'] as const;
  for (let i = 0; i < units.length; i++) {
    const size = 1024 ** (3 - i);
    if (n >= size) {
      const v = n / size;
      return `${v >= 100 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
    }
  }
  return `${n} bytes`;
}
