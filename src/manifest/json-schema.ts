/**
 * How the manifest's valibot schemas appear in generated JSON Schema (`/openapi.json` and
 * `/schemas/manifest.v0.json`): checks valibot runs in code are stated as patterns here.
 */
import type { ConversionConfig } from '@valibot/to-json-schema';
import { RELEASE_PATH_PATTERN, ReleasePath } from './schema.ts';

/** `overrideAction` for toJsonSchema: the release-path check becomes a length and a pattern. */
export const manifestActionOverride: NonNullable<ConversionConfig['overrideAction']> = (ctx) =>
  ctx.valibotAction === ReleasePath.pipe[1]
    ? { ...ctx.jsonSchema, minLength: 1, maxLength: 512, pattern: RELEASE_PATH_PATTERN }
    : undefined;
