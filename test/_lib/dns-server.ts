/**
 * A real DNS server on loopback (the `dns2` package, UDP) with a zone the test edits: the platform
 * points `PLATFORM_DNS_SERVERS` at it and Node's resolver asks it over the wire. A/AAAA questions
 * for a name with a CNAME follow the chain, as a recursive resolver would.
 */
import dns2 from 'dns2';

const { Packet } = dns2;

export type Rr = {
  type: 'A' | 'AAAA' | 'CNAME' | 'TXT' | 'CAA';
  value: string;
  tag?: 'issue' | 'issuewild' | 'iodef';
  flags?: number;
};

export type TestDns = {
  /** `127.0.0.1:<port>`, for PLATFORM_DNS_SERVERS */
  server: string;
  set(name: string, records: Rr[]): void;
  add(name: string, record: Rr): void;
  clear(name?: string): void;
  /** Questions for names under `suffix` are never answered (a zone whose servers are down). */
  silence(suffix: string): void;
  /** how many questions it answered */
  questions(): number;
  close(): Promise<void>;
};

export async function startDns(): Promise<TestDns> {
  const zone = new Map<string, Rr[]>();
  const silent: string[] = [];
  let asked = 0;
  const key = (n: string) => n.toLowerCase().replace(/\.$/, '');

  const answersFor = (name: string, type: number, depth = 0): any[] => {
    const rrs = zone.get(key(name)) ?? [];
    const out: any[] = [];
    const base = { name, class: Packet.CLASS.IN, ttl: 60 };
    for (const rr of rrs) {
      if (
        rr.type === 'CNAME' &&
        type !== Packet.TYPE.CNAME &&
        (type === Packet.TYPE.A || type === Packet.TYPE.AAAA) &&
        depth < 5
      ) {
        out.push({ ...base, type: Packet.TYPE.CNAME, domain: rr.value });
        out.push(...answersFor(rr.value, type, depth + 1));
        continue;
      }
      if (Packet.TYPE[rr.type] !== type) continue;
      if (rr.type === 'A' || rr.type === 'AAAA') out.push({ ...base, type, address: rr.value });
      else if (rr.type === 'CNAME') out.push({ ...base, type, domain: rr.value });
      else if (rr.type === 'TXT') out.push({ ...base, type, data: rr.value });
      else if (rr.type === 'CAA')
        out.push({ ...base, type, flags: rr.flags ?? 0, tag: rr.tag ?? 'issue', value: rr.value });
    }
    return out;
  };

  const server = dns2.createServer({
    udp: true,
    handle: (request: any, send: (r: any) => void) => {
      asked++;
      const name = key(request.questions[0]?.name ?? '');
      if (silent.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) return;
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      response.answers.push(...answersFor(q.name, q.type));
      send(response);
    },
  });
  server.on('requestError', () => {});
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const { port } = (server.addresses() as { udp: { port: number } }).udp;
  return {
    server: `127.0.0.1:${port}`,
    set: (name, records) => void zone.set(key(name), records),
    add: (name, record) => void zone.set(key(name), [...(zone.get(key(name)) ?? []), record]),
    clear: (name) => (name ? void zone.delete(key(name)) : zone.clear()),
    silence: (suffix) => void silent.push(key(suffix)),
    questions: () => asked,
    close: () => server.close(),
  };
}
