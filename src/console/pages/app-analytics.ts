import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * An app's analytics: a daily requests chart (uPlot, served from the package), status, route and
 * target breakdowns, top paths and referrers, app users, jobs and webhooks, recent errors linking
 * to the events page. The range selector says when the plan shortens it; without the feature,
 * the page says what analytics would show and which plan has it.
 */
export const appAnalyticsPage: ConsolePage = {
  id: 'app-analytics',
  path: '/apps/:app_id/analytics',
  title: 'Analytics',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Analytics')}
<link rel="stylesheet" href="/assets/uplot.min.css">
<section class="card"><form id="range-form" class="row"><div><label for="range">Range</label><select id="range"><option value="7d">Last 7 days</option><option value="30d">Last 30 days</option><option value="90d">Last 90 days</option></select></div></form>
<p class="hint" id="clamp" hidden></p></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading analytics…</p></section>`,
};
