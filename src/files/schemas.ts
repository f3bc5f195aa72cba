/** The file browser's records: a stored file as the team sees it, a page of them. */
import * as v from 'valibot';
import { pageQuery, timeIdCursor } from '../http/paging.ts';
import { component, DateTime } from '../openapi/components.ts';

export const StoredFile = component(
  'StoredFile',
  v.strictObject({
    file_id: v.string(),
    store: v.string(),
    filename: v.string(),
    content_type: v.string(),
    size: v.number(),
    created_at: DateTime,
    /** the app user who uploaded it (null: app code on no one's behalf) */
    owner_user_id: v.nullable(v.string()),
    owner_email: v.nullable(v.string()),
    /** the stable URL of a file in a public store; null in a private one (ask for a signed URL) */
    public_url: v.nullable(v.string()),
  }),
);
export const StoredFilePage = component(
  'StoredFilePage',
  v.strictObject({
    app_id: v.string(),
    store: v.string(),
    public: v.boolean(),
    files: v.array(StoredFile),
    cursor: v.nullable(v.string()),
  }),
);
export const SignedFileUrl = component(
  'SignedFileUrl',
  v.strictObject({ url: v.string(), expires_at: DateTime }),
);
export const StoredFileDeleted = component(
  'StoredFileDeleted',
  v.strictObject({ file_id: v.string(), deleted: v.literal(true) }),
);

export const FilesQuery = v.strictObject({ ...pageQuery(timeIdCursor.decode) });
