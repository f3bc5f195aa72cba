/**
 * Every hour the platform runs `job`: it fetches TARGET_URL and stores the status, size and
 * <title> in the `snapshots` collection. `fetch` serves the stored snapshots as JSON.
 */
type Snapshot = { url: string; status: number; bytes: number; title: string; fetched_at: string };
type Ctx = {
  data: {
    collection(name: 'snapshots'): {
      create(f: Snapshot): Promise<Snapshot & { id: string }>;
      list(o?: { limit?: number }): Promise<(Snapshot & { id: string })[]>;
    };
  };
  secrets: { require(name: string): string };
  log: { info(message: string, metadata?: Record<string, unknown>): void };
};

const titleOf = (html: string) =>
  /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1]?.trim().slice(0, 200) ?? '';

export default {
  async fetch(request: Request, ctx: Ctx): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname !== '/api/snapshots')
      return Response.json({ error: 'not found' }, { status: 404 });
    const rows = await ctx.data.collection('snapshots').list({ limit: 100 });
    return Response.json({ snapshots: rows.reverse() });
  },

  async job(event: { job_name: string }, ctx: Ctx): Promise<void> {
    if (event.job_name !== 'snapshot') return;
    const url = ctx.secrets.require('TARGET_URL');
    const res = await fetch(url, { headers: { 'user-agent': 'platform-cron-template' } });
    const body = await res.text();
    // a failed fetch throws: the platform retries the job (max_attempts in the manifest)
    if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
    const row = await ctx.data.collection('snapshots').create({
      url,
      status: res.status,
      bytes: body.length,
      title: titleOf(body),
      fetched_at: new Date().toISOString(),
    });
    ctx.log.info('snapshot stored', { id: row.id, status: res.status, bytes: body.length });
  },
};
