// @ts-check
import {
  $,
  may,
  onlyFor,
  api,
  appHeading,
  appIdOf,
  boot,
  el,
  failure,
  say,
  show,
  showMore,
  table,
  when,
} from '../console.js';
const id = appIdOf();
const _params = new URLSearchParams(location.search);
let collections = [];
let current;
let shown = [];
let canWrite = false;

const go = (q) => {
  const u = new URL(location.href);
  u.search = new URLSearchParams(q).toString();
  history.pushState(null, '', u);
  route();
};
const rowLink = (collection, rowId) =>
  '/apps/' + id + '/data?' + new URLSearchParams({ collection, row: rowId });
const typeOf = (spec) => (typeof spec === 'string' ? { type: spec } : spec);

/** A field's value as a person reads it (json and richtext readable, references as links). */
function display(spec, value, compact) {
  if (value === undefined || value === null) return el('span', { class: 'muted' }, '—');
  const t = typeOf(spec);
  if (t.type === 'reference') return el('a', { href: rowLink(t.collection, value) }, String(value));
  if (t.type === 'json' && compact) {
    const j = JSON.stringify(value);
    return el('code', {}, j.length > 60 ? j.slice(0, 60) + '…' : j);
  }
  if (t.type === 'json') return el('pre', {}, JSON.stringify(value, null, 2));
  if (t.type === 'datetime') return el('time', { datetime: value, title: value }, when(value));
  if (t.type === 'boolean') return value ? 'yes' : 'no';
  if (t.type === 'richtext') return el('div', { class: 'richtext' }, String(value));
  const s = String(value);
  return s.length > 120 ? s.slice(0, 120) + '…' : s;
}

/** The input for a field of a type, holding the row's value. */
function input(name, spec, value) {
  const t = typeOf(spec);
  const idf = 'field-' + name;
  const v = value === undefined || value === null ? '' : value;
  if (t.type === 'enum')
    return el(
      'select',
      { id: idf, name },
      el('option', { value: '' }, '—'),
      t.values.map((x) => el('option', { value: x, selected: x === v }, x)),
    );
  if (t.type === 'boolean')
    return el(
      'select',
      { id: idf, name },
      el('option', { value: '' }, '—'),
      el('option', { value: 'true', selected: v === true }, 'yes'),
      el('option', { value: 'false', selected: v === false }, 'no'),
    );
  if (t.type === 'json')
    return el(
      'textarea',
      { id: idf, name, rows: 5, spellcheck: 'false' },
      v === '' ? '' : JSON.stringify(v, null, 2),
    );
  if (t.type === 'richtext') return el('textarea', { id: idf, name, rows: 5 }, v);
  if (t.type === 'integer' || t.type === 'number')
    return el('input', {
      id: idf,
      name,
      type: 'number',
      step: t.type === 'integer' ? '1' : 'any',
      value: v,
    });
  return el('input', {
    id: idf,
    name,
    value: v,
    placeholder:
      t.type === 'datetime'
        ? '2026-11-27T10:00:00Z'
        : t.type === 'reference'
          ? 'row id in ' + t.collection
          : '',
  });
}

/** The form's values as the API takes them: empty clears (null), numbers and JSON parsed. */
function fieldsOf(form, spec, creating) {
  const out = {};
  for (const [name, f] of Object.entries(spec.fields)) {
    const t = typeOf(f);
    const raw = form.elements[name].value;
    if (raw === '') {
      if (!creating) out[name] = null;
      continue;
    }
    if (t.type === 'integer' || t.type === 'number') out[name] = Number(raw);
    else if (t.type === 'boolean') out[name] = raw === 'true';
    else if (t.type === 'json') {
      try {
        out[name] = JSON.parse(raw);
      } catch {
        throw new Error(name + ' is not valid JSON.');
      }
    } else out[name] = raw;
  }
  return out;
}

function editor(spec, row) {
  const creating = !row;
  const form = el(
    'form',
    { id: 'row-form', novalidate: true },
    Object.entries(spec.fields).map(([name, f]) =>
      el(
        'div',
        {},
        el(
          'label',
          { for: 'field-' + name },
          name,
          ' ',
          el('span', { class: 'optional' }, typeOf(f).type),
        ),
        input(name, f, row ? row[name] : undefined),
      ),
    ),
    el(
      'div',
      { class: 'actions' },
      el('button', { type: 'submit' }, creating ? 'Create row' : 'Save changes'),
      el(
        'button',
        { type: 'button', class: 'secondary', onclick: () => go({ collection: current.name }) },
        'Cancel',
      ),
    ),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let fields;
    try {
      fields = fieldsOf(form, spec, creating);
    } catch (err) {
      return say(err.message, true);
    }
    const path = '/v0/apps/' + id + '/data/' + current.name + (creating ? '' : '/' + row.id);
    const r = await api(creating ? 'POST' : 'PATCH', path, fields);
    if (!r.ok) return say(failure(r), true);
    go({ collection: current.name, row: r.data.id });
    say(creating ? 'Row created.' : 'Saved.');
  });
  return form;
}

async function showRow(rowId, editing) {
  const panel = $('row-panel');
  panel.hidden = false;
  if (rowId === 'new')
    return show(panel, el('h2', {}, 'New row in ' + current.name), editor(current.spec));
  const r = await api(
    'GET',
    '/v0/apps/' + id + '/data/' + current.name + '/' + encodeURIComponent(rowId),
  );
  if (!r.ok) return show(panel, el('p', { class: 'error' }, failure(r)));
  const row = r.data;
  if (editing) return show(panel, el('h2', {}, 'Edit ' + row.id), editor(current.spec, row));
  show(
    panel,
    el('h2', {}, current.name + ' ', el('code', {}, row.id)),
    el(
      'dl',
      { class: 'fields' },
      Object.entries(current.spec.fields).map(([name, f]) => [
        el('dt', {}, name, ' ', el('span', { class: 'optional' }, typeOf(f).type)),
        el('dd', {}, display(f, row[name])),
      ]),
      el('dt', {}, 'created'),
      el('dd', {}, display('datetime', row.created_at)),
      el('dt', {}, 'updated'),
      el('dd', {}, display('datetime', row.updated_at)),
    ),
    canWrite
      ? el(
          'div',
          { class: 'actions' },
          el('button', { type: 'button', onclick: () => showRow(row.id, true) }, 'Edit'),
          el(
            'button',
            { type: 'button', class: 'secondary danger', onclick: () => remove(row) },
            'Delete',
          ),
        )
      : '',
  );
}

async function remove(row) {
  if (
    !confirm('Delete row ' + row.id + ' of ' + current.name + '? App code stops seeing it at once.')
  )
    return;
  const r = await api('DELETE', '/v0/apps/' + id + '/data/' + current.name + '/' + row.id);
  if (!r.ok) return say(failure(r), true);
  go({ collection: current.name });
  say('Row deleted.');
}

/** The order choices of a collection: by creation, and both ways by each field an index starts with. */
function orders(spec) {
  const sortable = [...new Set((spec.indexes || []).map((i) => i.fields[0]))];
  return [
    el('option', { value: 'newest' }, 'Newest first'),
    el('option', { value: 'oldest' }, 'Oldest first'),
    ...sortable.flatMap((f) => [
      el('option', { value: 'sort:' + f }, f + ', ascending'),
      el('option', { value: 'sort:-' + f }, f + ', descending'),
    ]),
  ];
}

async function loadRows(cursor) {
  const order = $('order').value || 'newest';
  const q = new URLSearchParams({ limit: '25' });
  if (order.startsWith('sort:')) q.set('sort', order.slice(5));
  else q.set('order', order);
  const where = $('where').value.trim();
  if (where && where !== '{}') q.set('where', where);
  if (cursor) q.set('cursor', cursor);
  const r = await api('GET', '/v0/apps/' + id + '/data/' + current.name + '?' + q);
  if (!r.ok) return show('rows', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.rows) : r.data.rows;
  // the sorted field is always among the columns
  const sortField = order.startsWith('sort:') ? order.slice(5).replace(/^-/, '') : undefined;
  const all = Object.entries(current.spec.fields);
  const fields = all.slice(0, 4);
  if (sortField && !fields.some(([n]) => n === sortField))
    fields.push(all.find(([n]) => n === sortField));
  const more = showMore(r.data.cursor, loadRows);
  const add = canWrite
    ? el(
        'p',
        {},
        el(
          'button',
          {
            type: 'button',
            id: 'new-row',
            onclick: () => go({ collection: current.name, row: 'new' }),
          },
          'New row',
        ),
      )
    : '';
  if (!shown.length)
    return show(
      'rows',
      add,
      el('p', { class: 'empty' }, where ? 'No row matches this filter.' : 'No rows yet.'),
    );
  show(
    'rows',
    add,
    table(shown, [
      ['Row', (row) => el('a', { href: rowLink(current.name, row.id) }, row.id)],
      ...fields.map(([name, f]) => [name, (row) => display(f, row[name], true)]),
      ['Created', (row) => display('datetime', row.created_at)],
    ]),
    more,
  );
}

async function route() {
  const p = new URLSearchParams(location.search);
  current = collections.find((c) => c.name === p.get('collection')) ?? collections[0];
  if (!current) return;
  for (const a of document.querySelectorAll('#collections a')) {
    if (!(a instanceof HTMLElement)) continue;
    if (a.dataset.name === current.name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  $('browser').hidden = false;
  $('row-panel').hidden = true;
  if ($('order').dataset.collection !== current.name) {
    show('order', ...orders(current.spec));
    $('order').dataset.collection = current.name;
  }
  await loadRows();
  if (p.get('row')) await showRow(p.get('row'), false);
}

const s = await boot(true);
if (s) {
  const heading = await appHeading(id, 'data');
  canWrite = heading.ok && may(s, heading.data.account_id, 'data.write');
  const r = heading.ok ? await api('GET', '/v0/apps/' + id + '/resources') : heading;
  if (!r.ok) show('collections', el('p', { class: 'error' }, failure(r)));
  else {
    collections = r.data.resources
      .filter((x) => x.resource_type === 'data')
      .map((x) => ({ name: x.resource_name, spec: x.spec, rows: x.usage?.rows ?? 0 }));
    if (!collections.length)
      show(
        'collections',
        el(
          'p',
          { class: 'empty' },
          'The live release declares no collections: add resources.data.collections to the manifest and publish.',
        ),
      );
    else {
      show(
        'collections',
        el('h2', {}, 'Collections'),
        el(
          'nav',
          { class: 'tabs', 'aria-label': 'Collections' },
          collections.map((c) =>
            el(
              'a',
              {
                href: '/apps/' + id + '/data?collection=' + encodeURIComponent(c.name),
                'data-name': c.name,
                onclick: (e) => {
                  e.preventDefault();
                  go({ collection: c.name });
                },
              },
              c.name + ' (' + c.rows + ')',
            ),
          ),
        ),
        canWrite ? '' : onlyFor('data.write', 'change rows'),
      );
      $('filter').addEventListener('submit', (e) => {
        e.preventDefault();
        loadRows();
      });
      addEventListener('popstate', route);
      await route();
    }
  }
}
