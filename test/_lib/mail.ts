/** A real SMTP server on loopback that keeps what it receives, and a graphile-worker runner to send through it. */
import type { AddressInfo } from 'node:net';
import { run, type Runner } from 'graphile-worker';
import { SMTPServer } from 'smtp-server';
import { workerLogger } from '../../src/boot.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import type { Harness } from './harness.ts';

export type Received = { to: string[]; text: string };

/** Quoted-printable soft breaks and escapes undone, to read a message as a person would. */
export const decodeQP = (s: string) =>
  s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hx: string) => String.fromCharCode(parseInt(hx, 16)));

/** `port`: listen there (a relay that comes back up); a free one by default. */
export async function startSmtp(port = 0): Promise<{
  url: string;
  received: Received[];
  next(to: string): Promise<Received>;
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (c) => (data += c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), text: decodeQP(data) });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(port, '127.0.0.1', () => r()));
  const bound = (smtp.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    received,
    /** The next message to `to` not read before (waits up to 10 s). */
    async next(to) {
      for (let i = 0; i < 200; i++) {
        const idx = received.findIndex((m) => m.to.includes(to));
        if (idx >= 0) return received.splice(idx, 1)[0]!;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no mail reached ${to}`);
    },
    close: () => new Promise<void>((r) => smtp.close(() => r())),
  };
}

/** The job worker, as `npm start` runs it, so queued mail is sent. */
export function startWorker(h: Harness, logger = workerLogger()): Promise<Runner> {
  return run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 50,
    logger,
    preset: WORKER_PRESET,
  });
}

/** The link token in a message: `/auth/confirm#token=…`. */
export function linkToken(text: string): string {
  const m = /\/auth\/confirm#token=([A-Za-z0-9_-]{43})/.exec(text);
  if (!m) throw new Error(`no sign-in link in: ${text}`);
  return m[1]!;
}
