/**
 * A real S3-protocol server on loopback for the tests (s3rver, files in a scratch folder): the AWS
 * SDK talks to it as to any S3 endpoint. `env` is the PLATFORM_S3_* configuration that points at it.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

export type S3Server = {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  keys(): Promise<string[]>;
  close(): Promise<void>;
};

export async function startS3(name = 'platform-blobs'): Promise<S3Server> {
  const directory = path.resolve(
    '.data',
    'test-scratch',
    `s3-${process.pid}-${Math.random().toString(36).slice(2)}`,
  );
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name }],
  });
  const info = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${info.port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    endpoint,
    bucket: name,
    env: {
      PLATFORM_S3_ENDPOINT: endpoint,
      PLATFORM_S3_BUCKET: name,
      PLATFORM_S3_REGION: 'us-east-1',
      PLATFORM_S3_ACCESS_KEY_ID: 'S3RVER',
      PLATFORM_S3_SECRET_ACCESS_KEY: 'S3RVER',
      PLATFORM_S3_FORCE_PATH_STYLE: 'true',
    },
    async keys() {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: name, ContinuationToken: token }),
        );
        out.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out.sort();
    },
    async close() {
      await server.close();
      client.destroy();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
