/**
 * The API reference on the docs host, rendered on the server from the same `/openapi.json` the
 * API serves: operations grouped by tag with their parameters, bodies, every status with its error
 * codes, security and examples, then the records. Nothing is fetched from a CDN.
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { OpenApiDocument } from '../openapi/generate.ts';

type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;
/** The parts of a JSON Schema (as /openapi.json writes them) the reference shows. */
type Schema = {
  $ref?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  type?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  description?: string;
  examples?: unknown[];
};
type Media = { schema?: Schema; example?: unknown };
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, unknown>[];
  parameters?: { name: string; in: string; schema?: Schema; required?: boolean }[];
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
};

const refName = (ref: string) => ref.split('/').pop()!;
const anchor = (s: string) => s.replace(/[^A-Za-z0-9]+/g, '-');

/** A short type: `string`, `AppSummary[]`, `"a" | "b"`, `string | null`, with records linked. */
export function typeOf(schema: Schema | undefined): Markup {
  if (!schema) return html`any`;
  if (schema.$ref)
    return html`<a href="#schema-${refName(schema.$ref)}">${refName(schema.$ref)}</a>`;
  if (schema.const !== undefined) return html`<code>${JSON.stringify(schema.const)}</code>`;
  if (schema.enum)
    return html`${schema.enum.map((v, i) => html`${i ? ' | ' : ''}<code>${JSON.stringify(v)}</code>`)}`;
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return html`${union.map((s, i) => html`${i ? ' | ' : ''}${typeOf(s)}`)}`;
  if (schema.type === 'array') return html`${typeOf(schema.items)}[]`;
  if (schema.type === 'object' && !schema.properties) return html`object`;
  if (schema.type === 'object') return html`object`;
  const notes = [
    schema.format,
    schema.pattern ? `pattern ${schema.pattern}` : '',
    schema.minLength !== undefined ? `${schema.minLength}..${schema.maxLength ?? ''} chars` : '',
    schema.minimum !== undefined ? `${schema.minimum}..${schema.maximum ?? ''}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return html`${schema.type ?? 'any'}${notes ? html` <span class="muted">(${notes})</span>` : ''}`;
}

/** The fields of an object schema as a table (nested objects inline). */
function fields(schema: Schema): Markup {
  const props = Object.entries(schema.properties ?? {});
  if (!props.length)
    return html`<p class="muted">${typeof schema.additionalProperties === 'object' ? html`An object whose values are ${typeOf(schema.additionalProperties)}.` : 'A free-form object.'}</p>`;
  const required = new Set(schema.required ?? []);
  return html`<table><thead><tr><th>field</th><th>type</th><th></th></tr></thead><tbody>${props.map(
    ([name, s]) =>
      html`<tr><td><code>${name}</code></td><td>${typeOf(s)}${s.type === 'object' && s.properties ? fields(s) : ''}</td><td>${required.has(name) ? 'required' : html`<span class="muted">optional</span>`}</td></tr>`,
  )}</tbody></table>`;
}

function body(schema: Schema | undefined): Markup {
  if (!schema) return html``;
  if (schema.$ref) return html`${typeOf(schema)}`;
  return schema.type === 'object' ? fields(schema) : typeOf(schema);
}

const SECURITY: Record<string, string> = {
  apiKey: 'API key (Authorization: Bearer ap_…)',
  consoleSession: 'console session cookie',
  csrfHeader: 'X-Platform-CSRF',
};

function operation(method: string, path: string, op: Operation): Markup {
  const security = op.security.map((req) =>
    Object.keys(req)
      .map((k) => SECURITY[k] ?? k)
      .join(' + '),
  );
  const request = op.requestBody?.content?.['application/json']?.schema;
  return html`<section class="op" id="${op.operationId}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
<p><strong>${op.summary}</strong>${op.description ? html` ${op.description}` : ''}</p>
<p class="muted">Auth: ${security.length ? security.join(', or ') : 'none'} · operationId <code>${op.operationId}</code></p>
${op.parameters?.length ? html`<h4>Parameters</h4><table><tbody>${op.parameters.map((p) => html`<tr><td><code>${p.name}</code></td><td>${p.in}</td><td>${typeOf(p.schema)}</td><td>${p.required ? 'required' : html`<span class="muted">optional</span>`}</td></tr>`)}</tbody></table>` : ''}
${request ? html`<h4>Request body</h4>${body(request)}` : ''}
<h4>Responses</h4>
<table><tbody>${Object.entries(op.responses).map(([status, r]) => {
    const media = r.content?.['application/json'];
    const codes = media?.schema?.properties?.error?.properties?.code?.enum as string[] | undefined;
    return html`<tr><td><strong>${status}</strong></td><td>${codes ? html`${codes.map((c, i) => html`${i ? ', ' : ''}<code>${c}</code>`)}` : media ? body(media.schema) : r.description}${media?.example !== undefined ? html`<details><summary>Example</summary><pre>${JSON.stringify(media.example, null, 2)}</pre></details>` : ''}</td></tr>`;
  })}</tbody></table>
</section>`;
}

export function referenceBody(doc: OpenApiDocument): Markup {
  const tags = (doc.tags as { name: string; description: string }[]) ?? [];
  const byTag = new Map<string, [string, string, Operation][]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const operation = op as Operation;
      const tag = operation.tags[0] ?? 'Service';
      byTag.set(tag, [...(byTag.get(tag) ?? []), [method, path, operation]]);
    }
  }
  const schemas = Object.entries(doc.components.schemas as Record<string, Schema>);
  return html`<p>${(doc.info as { description?: string }).description} Base URL: <code>${(doc.servers as { url: string }[])[0]?.url}</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<p>Every error is <code>{"error": {"code", "message", "details"?}}</code>; each operation lists the codes each status can carry.</p>
<nav class="toc" aria-label="Operations">${tags
    .filter((t) => byTag.has(t.name))
    .map(
      (t) =>
        html`<div><strong><a href="#tag-${anchor(t.name)}">${t.name}</a></strong><ul>${byTag.get(t.name)!.map(([m, p, op]) => html`<li><a href="#${op.operationId}"><span class="method ${m}">${m.toUpperCase()}</span> ${p}</a></li>`)}</ul></div>`,
    )}</nav>
${tags.filter((t) => byTag.has(t.name)).map((t) => html`<h2 id="tag-${anchor(t.name)}">${t.name}</h2><p class="muted">${t.description}</p>${byTag.get(t.name)!.map(([m, p, op]) => operation(m, p, op))}`)}
<h2 id="records">Records</h2>
${schemas.map(([name, s]) => html`<section class="op" id="schema-${name}"><h3>${name}</h3>${s.description ? html`<p>${s.description}</p>` : ''}${body({ ...s, examples: undefined })}${s.examples?.length ? html`<details><summary>Example</summary><pre>${JSON.stringify(s.examples[0], null, 2)}</pre></details>` : ''}</section>`)}
${raw('')}`;
}
