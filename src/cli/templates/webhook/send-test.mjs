#!/usr/bin/env node
// Sends one signed test delivery (Standard Webhooks) to this app's webhook:
//   node send-test.mjs <app url> [json]
// The signing secret is WEBHOOK_SECRET from .env (or the environment).
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [url, json = '{"type":"test.ping","hello":"world"}'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node send-test.mjs <app url> [json]');
  process.exit(2);
}
let secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  const env = readFileSync(new URL('./.env', import.meta.url), 'utf8');
  secret = /^WEBHOOK_SECRET=(.*)$/m.exec(env)?.[1]?.trim();
}
if (!secret?.startsWith('whsec_')) {
  console.error('WEBHOOK_SECRET (whsec_...) is not in .env or the environment');
  process.exit(2);
}
const id = `msg_${randomUUID()}`;
const timestamp = String(Math.floor(Date.now() / 1000));
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${json}`).digest('base64');
const res = await fetch(new URL('/_platform/webhooks/incoming', url), {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  },
  body: json,
});
console.log(res.status, await res.text());
process.exit(res.ok ? 0 : 1);
