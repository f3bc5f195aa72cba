/**
 * /openapi.json as a client author meets it: a valid OpenAPI 3.1 document that lints clean, in
 * which every route is documented with every status and body, every record has a true example,
 * and generated TypeScript types give every operation a real success body.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { V0_ROUTES } from '../../src/client/v0.ts';
import { createContractChecker } from '../_lib/contract.ts';
import { createHarness } from '../_lib/harness.ts';

/** A success body that is text (`/metrics`): its one text/* media entry. */
/** A body that is not JSON: text (`/metrics`) or bytes (an R2 object's download). */
const textMedia = (response: any) =>
  Object.entries<any>(response.content ?? {}).find(
    ([type]) =>
      type.startsWith('text/') || type === 'application/octet-stream' || type === 'application/sql',
  )?.[1];

const h = await createHarness();
const served = await h.call('GET', '/openapi.json');
const doc = served.body;
type Op = {
  operationId: string;
  summary: string;
  tags: string[];
  security: unknown[];
  responses: Record<string, any>;
  requestBody?: any;
};
const operations: { method: string; path: string; op: Op }[] = Object.entries<Record<string, Op>>(
  doc.paths,
).flatMap(([p, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path: p, op })),
);

test('is valid OpenAPI 3.1, and the docs host serves the same document', async () => {
  assert.is(served.status, 200);
  assert.is(doc.openapi, '3.1.0');
  const result = await validate(structuredClone(doc));
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  const docs = await h.call('GET', '/openapi.json', { host: h.config.hosts.docs });
  assert.equal(docs.body, doc);
});

test("lints clean with @redocly/cli's recommended rules", async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: 'openapi.json',
    config,
  });
  // Each exception is a fact of the service, not of the document (docs/decisions/foundation.md, "The OpenAPI document"):
  const expected = (ruleId: string, pointer: string) =>
    // /healthz, /openapi.json and the manifest schema answer 200 to anyone, with no input to refuse
    (ruleId === 'operation-4xx-response' &&
      [
        '#/paths/~1healthz/get/responses',
        '#/paths/~1openapi.json/get/responses',
        '#/paths/~1schemas~1manifest.v0.json/get/responses',
      ].includes(pointer)) ||
    // the server URL is the operator's API host: api.localhost in development and tests, by design
    (ruleId === 'no-server-example.com' && pointer === '#/servers/0/url');
  // a recording run (npm run openapi:examples) is replacing the examples, so they are not judged then
  const recording = (ruleId: string) =>
    Boolean(process.env.PLATFORM_RECORD_EXAMPLES) && ruleId.includes('examples');
  const shown = problems
    .filter((p) => !expected(p.ruleId, p.location[0]?.pointer ?? '') && !recording(p.ruleId))
    .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
  assert.equal(shown, []);
});

test('every route is documented and every documented operation is routed', () => {
  const routed = new Set(
    h.server.api.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`),
  );
  const documented = new Set(operations.map((o) => `${o.method} ${o.path}`));
  for (const route of routed)
    if (route.includes(' /v0/')) assert.ok(documented.has(route), `${route} is documented`);
  for (const op of documented) assert.ok(routed.has(op), `${op} is routed`);
  assert.ok(operations.length >= 25);
});

test('every operation has an id, a tag, a summary, its security, and a schema for every status', () => {
  const ids = new Set<string>();
  for (const { method, path: p, op } of operations) {
    const label = `${method} ${p}`;
    assert.match(op.operationId, /^[a-z][A-Za-z0-9]+$/, `${label} operationId`);
    assert.not.ok(ids.has(op.operationId), `${label}: operationId ${op.operationId} is unique`);
    ids.add(op.operationId);
    assert.ok(op.summary && op.tags.length, `${label} summary and tag`);
    assert.ok(Array.isArray(op.security), `${label} declares its security`);
    // signed by their sender instead of an API key: the payments webhook
    const open = [
      'requestEmailLink',
      'confirmEmailLink',
      'completeSignup',
      'startDeviceAuthorization',
      'pollDeviceAuthorization',
      'paymentsWebhook',
      'stripeWebhook',
    ];
    assert.is(
      op.security.length === 0,
      !p.startsWith('/v0/') || op.tags.includes('Legacy') || open.includes(op.operationId),
      `${label}: only service, sign-in, signed-webhook and retired routes are open`,
    );
    assert.is(
      op.responses.default?.content['application/json'].schema.$ref,
      '#/components/schemas/Error',
      `${label} default`,
    );
    for (const [status, response] of Object.entries<any>(op.responses)) {
      assert.ok(
        (response.content?.['application/json'] ?? textMedia(response))?.schema,
        `${label} ${status} has a body schema`,
      );
      if (Number(status) >= 400) {
        const codes: string[] =
          response.content['application/json'].schema.properties.error.properties.code.enum;
        assert.ok(codes.length > 0, `${label} ${status} names its codes`);
        assert.ok(
          codes.every((c) => response.description.includes(`\`${c}\``)),
          `${label} ${status} describes its codes`,
        );
      }
    }
    if (op.security.length) {
      assert.ok(op.responses['401'], `${label} documents 401`);
      if (method !== 'GET')
        assert.ok(
          op.responses['403']?.description.includes('csrf_rejected'),
          `${label} documents the CSRF refusal`,
        );
    }
    if (op.requestBody)
      assert.ok(op.responses['400'], `${label} takes a body, so it documents 400`);
  }
  // a few the contract names, checked by hand
  const publish = doc.paths['/v0/apps'].put;
  assert.equal(
    publish.responses['400'].content['application/json'].schema.properties.error.properties.code
      .enum,
    [
      'invalid_bundle',
      'invalid_json',
      'invalid_path',
      'invalid_request',
      'invalid_resource_manifest',
      'missing_server_entry',
      'missing_static_root',
      'unsupported_media_type',
    ],
  );
  assert.ok(publish.responses['413'].description.includes('bundle_too_large'));
  assert.is(
    publish.responses['200'].content['application/json'].schema.$ref,
    '#/components/schemas/PublishAppResponse',
  );
  assert.ok(publish.parameters.some((p: { name: string }) => p.name === 'X-Platform-Account-Id'));
  assert.ok(
    doc.paths['/v0/apps/{app_id}/secrets/{name}'].put.responses['403'],
    'a viewer cannot set secrets: 403 documented',
  );
  assert.not.ok(
    doc.paths['/v0/apps/{app_id}/events'].get.responses['403'],
    'every role reads events: no 403',
  );
});

test("the contract's records are named components", () => {
  for (const name of [
    'AppSummary',
    'ReleaseSummary',
    'PublishAppResponse',
    'ActivationResult',
    'ResourceState',
    'EventSummary',
    'SecretSummary',
    'AdminInviteRequest',
    'AdminInviteResponse',
    'HealthResponse',
    'AccountMembership',
    'AccountList',
    'ApiKeyMetadata',
    'Error',
  ]) {
    assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
  }
  assert.equal(doc.components.schemas.ActivationResult.required.sort(), [
    'missing_secrets',
    'previous_release_id',
    'reasons',
    'status',
  ]);
  // the release-path rule, checked in code, is stated as a pattern for clients
  const pathRule = new RegExp(doc.components.schemas.ReleaseFileInput.properties.path.pattern);
  assert.equal(
    ['public/index.html', 'a.b/c.js', '/abs', 'a/../b', '_platform/x', 'a\\b', 'a//b'].map((p) =>
      pathRule.test(p),
    ),
    [true, true, false, false, false, false, false],
  );
});

/** Documents whose example would be a copy of themselves. */
const SELF_DESCRIBING = ['openapi', 'manifestSchema'];

test('every record and every success answer has an example that fits its schema', () => {
  // a recording run (npm run openapi:examples) is what replaces them; the next ordinary run checks the result
  if (process.env.PLATFORM_RECORD_EXAMPLES) return;
  const ajv = new Ajv2020({ strict: false });
  (ajvFormats as unknown as (a: unknown) => void)(ajv);
  const check = (schema: object, example: unknown, label: string) => {
    const fn = ajv.compile({ ...schema, components: doc.components });
    assert.ok(
      fn(example),
      `${label}: ${JSON.stringify(fn.errors?.[0])} (run npm run openapi:examples)`,
    );
  };
  for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
    assert.ok(
      Array.isArray(schema.examples) && schema.examples.length,
      `${name} has an example (run npm run openapi:examples)`,
    );
    check(schema, schema.examples[0], `example of ${name}`);
  }
  for (const { method, path: p, op } of operations) {
    for (const [status, response] of Object.entries<any>(op.responses)) {
      const media = response.content['application/json'] ?? textMedia(response);
      if (Number(status) < 300 && !SELF_DESCRIBING.includes(op.operationId))
        assert.ok(
          media.example !== undefined,
          `${method} ${p} ${status} has an example (run npm run openapi:examples)`,
        );
      if (media.example !== undefined)
        check(media.schema, media.example, `example of ${op.operationId} ${status}`);
    }
  }
});

test('openapi-typescript gives every operation a typed success body', async () => {
  const source = astToString(await openapiTS(structuredClone(doc)));
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-ts-'));
  try {
    writeFileSync(path.join(dir, 'api.ts'), source);
    const probes: string[] = [];
    for (const { op } of operations) {
      for (const status of Object.keys(op.responses).filter((s) => Number(s) < 300)) {
        probes.push(
          `export type ${op.operationId}_${status} = operations['${op.operationId}']['responses'][${status}]['content']['${Object.keys(op.responses[status].content)[0]}'];`,
        );
      }
    }
    assert.ok(probes.length >= 20);
    writeFileSync(
      path.join(dir, 'probe.ts'),
      `import type { operations } from './api.ts';\n${probes.join('\n')}\n`,
    );
    const program = ts.createProgram([path.join(dir, 'probe.ts')], {
      strict: true,
      noEmit: true,
      types: [],
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.equal(diagnostics, []);
    const checker = program.getTypeChecker();
    const probe = program.getSourceFile(path.join(dir, 'probe.ts'))!;
    const blind: string[] = [];
    probe.forEachChild((node) => {
      if (!ts.isTypeAliasDeclaration(node)) return;
      const type = checker.getTypeAtLocation(node.name);
      if (type.flags & (ts.TypeFlags.Never | ts.TypeFlags.Unknown | ts.TypeFlags.Any))
        blind.push(`${node.name.text}: ${checker.typeToString(type)}`);
    });
    assert.equal(blind, []);
    // a record comes through with its fields
    assert.match(source, /AppSummary: \{[^}]*app_id: string;/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the typed client (src/client/v0.ts) names exactly the documented operations', () => {
  const documented = operations.map((o) => `${o.method} ${o.path}`).sort();
  assert.equal([...V0_ROUTES].sort(), documented);
});

test('the checker refuses what the document does not say', () => {
  const checker = createContractChecker(doc);
  assert.is(checker.check('GET', '/v0/apps', 200, { apps: [] }), null);
  assert.match(
    checker.check('GET', '/v0/apps', 200, { apps: [{ app_id: 'x' }] }) ?? '',
    "/apps/0 must have required property 'name'",
  );
  assert.match(
    checker.check('GET', '/v0/apps/abc', 200, {
      app_id: 'x',
      name: 'n',
      visibility: 'public',
      origin: 'http://x',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      live_release_id: null,
      account_id: 'acct_x',
      extra: 1,
    }) ?? '',
    'additional properties',
  );
  assert.match(
    checker.check('GET', '/v0/apps/abc', 418, undefined) ?? '',
    'answered 418, which the document does not list',
  );
  assert.match(
    checker.check('GET', '/v0/apps/abc', 404, { error: { code: 'app_takedown', message: 'x' } }) ??
      '',
    'must be equal to one of the allowed values',
  );
  assert.is(
    checker.check('GET', '/v0/apps/abc', 404, {
      error: { code: 'not_found', message: 'App not found.' },
    }),
    null,
  );
  assert.is(
    checker.check('GET', '/v0/nowhere', 404, { error: { code: 'not_found', message: 'x' } }),
    null,
    'undocumented paths are the router 404',
  );
});

test.after(() => h.close());
test.run();
