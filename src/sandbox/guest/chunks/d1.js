// Workers D1 over the platform's SQLite (src/sql/): D1Database (prepare, batch, exec, withSession,
// dump) and D1PreparedStatement (bind, first, all, raw, run), with D1's results, meta and error
// words. Statements cross to the platform as SQL text and parameters; SQLite runs them there.

const bytesOf = (v) =>
  v instanceof ArrayBuffer
    ? new Uint8Array(v)
    : ArrayBuffer.isView(v)
      ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
      : null;

/** A parameter as it crosses: D1 takes null, numbers, strings, booleans and buffers. */
function wireParam(v) {
  const b = bytesOf(v);
  if (b) return { $bytes: [...b] };
  return v === undefined ? { $undefined: true } : v;
}

/** The platform's refusals reach app code as D1 throws them: plain Errors with D1's words. */
const asD1Error = (e) => {
  if (e && (e.code === 'invalid_request' || e.code === 'not_available')) {
    const err = new Error(e.message);
    throw err;
  }
  throw e;
};

function result(answer) {
  return {
    success: true,
    meta: {
      served_by: 'platform-sqlite',
      served_by_region: undefined,
      served_by_primary: true,
      timings: { sql_duration_ms: answer.meta.duration },
      duration: answer.meta.duration,
      changes: answer.meta.changes,
      last_row_id: answer.meta.last_row_id,
      changed_db: answer.meta.changed_db,
      size_after: answer.meta.size_after,
      rows_read: answer.meta.rows_read,
      rows_written: answer.meta.rows_written,
      total_attempts: 1,
    },
    results: answer.results,
  };
}

const STATEMENT = Symbol('statement');

class D1PreparedStatement {
  constructor(database, sql, params = []) {
    this[STATEMENT] = { database, sql, params };
  }
  bind(...values) {
    const { database, sql } = this[STATEMENT];
    return new D1PreparedStatement(database, sql, values);
  }
  async first(column) {
    const [answer] = await this[STATEMENT].database._query([this], 'first');
    const row = answer.results[0];
    if (column === undefined) return row ?? null;
    if (!row) return null;
    if (!(column in row)) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
    return row[column];
  }
  async all() {
    const [answer] = await this[STATEMENT].database._query([this], 'all');
    return result(answer);
  }
  async run() {
    const [answer] = await this[STATEMENT].database._query([this], 'run');
    return result(answer);
  }
  async raw(options) {
    const [answer] = await this[STATEMENT].database._query([this], 'raw');
    return options?.columnNames ? [answer.columns, ...answer.rows] : answer.rows;
  }
}

class D1Database {
  #call;
  #binding;
  constructor(call, binding) {
    this.#call = call;
    this.#binding = binding;
  }
  prepare(query) {
    return new D1PreparedStatement(this, String(query));
  }
  async batch(statements) {
    if (!Array.isArray(statements) || statements.some((s) => !(s instanceof D1PreparedStatement)))
      throw new TypeError('D1_ERROR: batch() takes an array of prepared statements');
    if (statements.length === 0) return [];
    return (await this._query(statements, 'batch')).map(result);
  }
  async exec(query) {
    const started = performance.now();
    const parts = splitStatements(String(query));
    if (parts.length === 0)
      throw new Error('D1_EXEC_ERROR: Error in line 1: : No SQL statements detected.');
    const answers = await this._query(
      parts.map((sql) => new D1PreparedStatement(this, sql)),
      'exec',
    );
    return { count: answers.length, duration: performance.now() - started };
  }
  withSession() {
    // one copy of each database, always current: every session reads its own writes
    const session = Object.create(this);
    session.getBookmark = () => null;
    return session;
  }
  async dump() {
    throw new Error('D1_DUMP_ERROR: dump() is not supported; use `platform d1 export`');
  }
  async _query(statements, mode) {
    const wire = statements.map((s) => ({
      sql: s[STATEMENT].sql,
      params: s[STATEMENT].params.map(wireParam),
    }));
    const answers = await this.#call('d1.query', [this.#binding, wire, mode]).catch(asD1Error);
    return answers.value ?? answers;
  }
}

/** exec()'s statements: one per line's `;`-ended statement, as D1 splits them (quotes respected). */
function splitStatements(text) {
  const out = [];
  let start = 0;
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '-' && text[i + 1] === '-') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
    } else if (c === ';') {
      const sql = text.slice(start, i).trim();
      if (sql) out.push(sql);
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last) out.push(last);
  return out;
}

/** @param {{ internals: Record<string, any> }} platform */
export default function install(platform) {
  platform.internals.d1Database = (call, binding) => new D1Database(call, binding);
}
