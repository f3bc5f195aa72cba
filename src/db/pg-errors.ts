import { ApiError } from '../errors.ts';

/** Maps Postgres SQLSTATEs to API errors in one place; anything else stays an internal error. */
export function mapPgError(err: unknown): ApiError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  switch (code) {
    case '23505':
      return new ApiError('conflict', 'A record with the same unique value already exists.');
    case '22P02':
    case '22007':
    case '22008':
      return new ApiError('invalid_request', 'A value has an invalid format.');
    case '57014':
      return new ApiError(
        'service_unavailable',
        'The database took too long to answer; try again.',
      );
    case '53300':
    case '57P01':
    case '57P03':
    case '08006':
    case '08001':
      return new ApiError('service_unavailable', 'The database is unavailable; try again shortly.');
    default:
      return undefined;
  }
}

/**
 * A refusal no retry changes: SQLSTATE class 22 (data exception, e.g. a NUL in text) or 23 (integrity
 * constraint violation). Background writers isolate such a row instead of retrying its batch forever.
 */
export function refusedForGood(err: unknown): boolean {
  return /^2[23]/.test(String((err as { code?: unknown } | undefined)?.code ?? ''));
}
