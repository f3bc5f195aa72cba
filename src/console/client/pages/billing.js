// @ts-check
import { $, accountId, api, boot, el, failure, say, show, table, when } from '../console.js';
/** Plan display names from the operator's catalogue, rendered into the page. */
const NAMES = JSON.parse($('content').dataset.planNames);
const SOURCE = {
  default: 'Nothing bought yet.',
  manual: 'Set by the platform operator.',
  stripe: 'From your Stripe subscription.',
};
const STATE = {
  active: ['Active', 'good'],
  past_due_grace: ['Payment failed: grace period', 'warn'],
  restricted: ['Payment overdue', 'bad'],
};
/** @type {{ plan_key: string } & Record<string, any>} */
let current;

async function load() {
  const r = await api('GET', '/v0/billing/plan');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  current = r.data;
  const p = current;
  const [stateText, stateClass] = STATE[p.billing_access_state] || [
    p.billing_access_state,
    'muted',
  ];
  const name = (k) => NAMES[k] || k;
  const parts = [
    el('h2', {}, 'Current plan'),
    el(
      'p',
      { class: 'plan-line' },
      el('strong', { id: 'current-plan' }, name(p.plan_key)),
      ' ',
      el('span', { class: 'badge ' + stateClass }, stateText),
    ),
    el(
      'p',
      { class: 'muted', id: 'plan-source' },
      SOURCE[p.entitlement_source] || p.entitlement_source,
    ),
  ];
  if (p.billing_access_state === 'past_due_grace')
    parts.push(
      el(
        'p',
        { class: 'error', id: 'grace' },
        'A payment failed. Your apps stay online until ' +
          when(p.grace_ends_at) +
          '; new slugs, domains and other paid features are paused. Update your card in the customer portal.',
      ),
    );
  if (p.billing_access_state === 'restricted')
    parts.push(
      el(
        'p',
        { class: 'error', id: 'grace' },
        'Payment is overdue and the account is back on Free. Pay the open invoice in the customer portal to restore your plan.',
      ),
    );
  if (p.subscription)
    parts.push(
      table(
        [p.subscription],
        [
          ['Subscription', (s) => el('code', {}, s.id)],
          ['Status', (s) => s.status],
          ['Plan', (s) => (s.plan_key ? name(s.plan_key) : 'unknown price ' + s.price_id)],
          [
            'Renews',
            (s) =>
              s.cancel_at_period_end
                ? 'ends ' + when(s.current_period_end)
                : when(s.current_period_end),
          ],
        ],
      ),
    );
  if (p.stripe_customer)
    parts.push(
      el(
        'div',
        { class: 'actions' },
        el('button', { type: 'button', id: 'portal', onclick: portal }, 'Manage billing in Stripe'),
      ),
    );
  if (!p.billing_configured)
    parts.push(
      el(
        'p',
        { class: 'muted' },
        'Billing is not set up on this platform; ask its operator to change your plan (npm run admin -- set-plan --account ' +
          p.account_id +
          ' --plan <plan>).',
      ),
    );
  show('content', ...parts);
  const card = $('plans-card');
  card.hidden = !p.billing_configured;
  const live =
    p.subscription && ['active', 'trialing', 'past_due', 'unpaid'].includes(p.subscription.status);
  const price = (k) =>
    (p.allowed_upgrade_plans.find((x) => x.plan_key === k) || { price_monthly_usd: 0 })
      .price_monthly_usd;
  $('plans').replaceChildren(
    table(p.allowed_upgrade_plans, [
      ['Plan', (x) => x.display_name],
      ['Price', (x) => '$' + x.price_monthly_usd + ' / month'],
      [
        '',
        (x) =>
          x.plan_key === p.plan_key
            ? el('span', { class: 'badge good' }, 'current')
            : live
              ? el('span', { class: 'muted' }, 'change in the portal')
              : !x.configured
                ? el('span', { class: 'muted' }, 'not available')
                : el(
                    'button',
                    {
                      type: 'button',
                      class: 'small',
                      onclick: () => choose(x, price(x.plan_key) < price(p.plan_key)),
                    },
                    (price(x.plan_key) < price(p.plan_key) ? 'Switch to ' : 'Upgrade to ') +
                      x.display_name,
                  ),
      ],
    ]),
  );
}

async function choose(x, lower) {
  if (lower) {
    // anything that lowers the plan shows what it would do first
    const pr = await api(
      'GET',
      '/v0/accounts/' + accountId() + '/downgrade-preview?plan=' + x.plan_key,
    );
    if (!pr.ok) return say(failure(pr), true);
    const v = pr.data;
    const lines = [
      ...v.violations.filter((i) => i.type !== 'route').map((i) => el('li', {}, i.message)),
      ...v.actions.map((a) => el('li', {}, a.reason)),
    ];
    show(
      'preview-result',
      el(
        'p',
        { class: v.compatible ? '' : 'error' },
        v.compatible
          ? 'Moving to ' + x.display_name + ':'
          : 'This account does not fit ' + x.display_name + ' yet:',
      ),
      el('ul', {}, lines.length ? lines : [el('li', {}, 'nothing changes besides the limits.')]),
    );
    if (!v.compatible || !confirm('Move to ' + x.display_name + '?')) return;
  }
  const r = await api('POST', '/v0/billing/checkout-session', { plan_key: x.plan_key });
  if (!r.ok) return say(failure(r), true);
  say('Opening Stripe Checkout…');
  location.assign(r.data.url);
}

async function portal() {
  const r = await api('POST', '/v0/billing/portal-session');
  if (!r.ok) return say(failure(r), true);
  location.assign(r.data.url);
}

const me = await boot(true);
if (me) {
  await load();
  const back = new URLSearchParams(location.search).get('checkout');
  if (back === 'success') {
    // the redirect grants nothing: the plan changes when Stripe's event arrives
    say('Stripe has your payment; your plan changes as soon as Stripe confirms it.');
    const before = current.plan_key;
    for (let i = 0; i < 10 && current.plan_key === before; i++) {
      await new Promise((r) => setTimeout(r, 1500));
      await load();
    }
    if (current.plan_key !== before) say('You are on ' + $('current-plan').textContent + ' now.');
  } else if (back === 'cancelled') say('Checkout was cancelled; nothing changed.');
}
