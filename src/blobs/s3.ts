/**
 * The S3-compatible object store behind `PLATFORM_BLOB_STORE=s3`, through the AWS SDK (any S3
 * protocol server: AWS, R2, MinIO, ...). Objects are named by content: `<prefix>blobs/<account>/<sha256 hex>`.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { S3Config } from '../config.ts';

export type ObjectStore = {
  put(key: string, bytes: Buffer): Promise<void>;
  /** a file's bytes, streamed from disk (backups: never held whole in memory) */
  putFile(key: string, file: string): Promise<void>;
  /** undefined when there is no such object */
  get(key: string): Promise<Buffer | undefined>;
  /** bytes `offset` to `offset + length` of the object, undefined when absent */
  getRange(key: string, offset: number, length: number): Promise<Buffer | undefined>;
  /** the object as a stream (for large files), undefined when absent */
  stream(key: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | undefined>;
  delete(keys: string[]): Promise<void>;
  /** every object under a prefix, a page at a time */
  list(prefix: string): AsyncIterable<{ key: string; lastModified: Date }[]>;
};

export const blobPrefix = (config: S3Config) => `${config.prefix}blobs/`;
export const objectKey = (config: S3Config, accountId: string, sha256: Buffer) =>
  `${blobPrefix(config)}${accountId}/${sha256.toString('hex')}`;

type Sdk = typeof import('@aws-sdk/client-s3');

const absent = (sdk: Sdk, err: unknown) =>
  err instanceof sdk.NoSuchKey ||
  (err instanceof sdk.S3ServiceException && err.$metadata.httpStatusCode === 404);

/** The SDK's client, made on first use: nodes on the disk store never load the SDK's modules. */
function clientOf(config: S3Config) {
  let made: Promise<{ sdk: Sdk; client: InstanceType<Sdk['S3Client']> }> | undefined;
  return () =>
    (made ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: newClient(sdk, config),
    })));
}

function newClient(sdk: Sdk, config: S3Config) {
  return new sdk.S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    ...(config.accessKeyId && config.secretAccessKey
      ? {
          credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
        }
      : {}),
    // plain content-MD5-free PUTs every S3-compatible server understands; bytes are checked by their SHA-256 name
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

export function createObjectStore(config: S3Config): ObjectStore {
  const sdkClient = clientOf(config);
  const Bucket = config.bucket;
  return {
    async put(key, bytes) {
      const { sdk, client } = await sdkClient();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.length,
          ContentType: 'application/octet-stream',
        }),
      );
    },
    async putFile(key, file) {
      const { size } = await stat(file);
      const { sdk, client } = await sdkClient();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket,
          Key: key,
          Body: createReadStream(file),
          ContentLength: size,
          ContentType: 'application/gzip',
        }),
      );
    },
    async get(key) {
      const { sdk, client } = await sdkClient();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key }));
        return Buffer.from(await out.Body!.transformToByteArray());
      } catch (err) {
        if (absent(sdk, err)) return undefined;
        throw err;
      }
    },
    async getRange(key, offset, length) {
      const { sdk, client } = await sdkClient();
      try {
        const out = await client.send(
          new sdk.GetObjectCommand({
            Bucket,
            Key: key,
            Range: `bytes=${offset}-${offset + length - 1}`,
          }),
        );
        return Buffer.from(await out.Body!.transformToByteArray());
      } catch (err) {
        if (absent(sdk, err)) return undefined;
        throw err;
      }
    },
    async stream(key) {
      const { sdk, client } = await sdkClient();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key }));
        const body = out.Body as unknown as Readable & {
          transformToWebStream(): ReadableStream<Uint8Array>;
        };
        return { body: body.transformToWebStream(), size: Number(out.ContentLength ?? 0) };
      } catch (err) {
        if (absent(sdk, err)) return undefined;
        throw err;
      }
    },
    async delete(keys) {
      const { sdk, client } = await sdkClient();
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        await client.send(
          new sdk.DeleteObjectsCommand({
            Bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
      }
    },
    async *list(prefix) {
      const { sdk, client } = await sdkClient();
      let token: string | undefined;
      do {
        const out = await client.send(
          new sdk.ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
        );
        yield (out.Contents ?? [])
          .filter((o) => o.Key)
          .map((o) => ({ key: o.Key!, lastModified: o.LastModified ?? new Date(0) }));
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    },
  };
}
