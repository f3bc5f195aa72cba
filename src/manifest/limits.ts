/**
 * The contract's release limits, in one place: the publish validation, the request schema, the
 * plan catalogue's `release.file_count.max`, the publish route's body bound and the CLI's local
 * checks all read them, and their messages say them from here.
 */
export const RELEASE_LIMITS = {
  files: 1000,
  fileBytes: 20 * 1024 * 1024,
  totalBytes: 100 * 1024 * 1024,
} as const;

/** `n` bytes in whole MiB (the limits) or with one decimal (a file's size). */
export const mib = (n: number): string =>
  `${Number.isInteger(n / 1024 / 1024) ? n / 1024 / 1024 : (n / 1024 / 1024).toFixed(1)} MiB`;

/** The limits as a person reads them. */
export const RELEASE_LIMITS_TEXT = `${RELEASE_LIMITS.files} files, ${mib(RELEASE_LIMITS.fileBytes)} a file, ${mib(RELEASE_LIMITS.totalBytes)} in total`;
