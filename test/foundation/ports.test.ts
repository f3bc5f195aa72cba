/**
 * freePort(): the port `platform dev` and embedded Postgres fall back to is one no outgoing connection
 * can take between the check and the listen (a CI run once lost `platform dev` to EADDRINUSE on an
 * ephemeral port chosen seconds before the service listened).
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ephemeralStart, freePort } from '../../src/lib/ports.ts';

test('freePort gives a port below the range outgoing connections use, and it can be listened on', async () => {
  // what outgoing connections take here: the local ports of a few real ones
  const held: Socket[] = [];
  const target = createServer((s) => void held.push(s));
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const sockets: Socket[] = [];
  const outgoing: number[] = [];
  for (let i = 0; i < 20; i++) {
    const s = await new Promise<Socket>((r) => {
      const c = createConnection((target.address() as AddressInfo).port, '127.0.0.1', () => r(c));
    });
    sockets.push(s);
    outgoing.push(s.localPort!);
  }
  assert.ok(
    outgoing.every((p) => p >= ephemeralStart()),
    `outgoing ports ${outgoing.join(', ')} start at ${ephemeralStart()}`,
  );
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    assert.ok(port >= 10_000 && port < ephemeralStart(), `${port} is below ${ephemeralStart()}`);
    const server = createServer();
    await new Promise<void>((resolve, reject) =>
      server.once('error', reject).listen(port, '127.0.0.1', resolve),
    );
    await new Promise((r) => server.close(r));
  }
  for (const s of [...sockets, ...held]) s.destroy();
  await new Promise((r) => target.close(r));
});

test.run();
