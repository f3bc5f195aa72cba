/** Team members: who is in an account, invitations by e-mail, roles, and the last owner. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { createHarness, newMember, newUser, uniqueEmail } from '../_lib/harness.ts';
import { linkToken, startSmtp, startWorker } from '../_lib/mail.ts';

const smtp = await startSmtp();
const h = await createHarness({ SMTP_URL: smtp.url });
const worker = await startWorker(h);
const CONSOLE = h.config.hosts.console;

test('every member route passes the auth matrix (401s, strangers 404, roles below admin 403)', async () => {
  const owner = await newUser(h);
  const target = await newMember(h, owner.account_id, 'viewer');
  const base = `/v0/accounts/${owner.account_id}`;
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `${base}/members` },
    { ownerAccountId: owner.account_id },
  );
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `${base}/members`, body: { email: uniqueEmail('x'), role: 'viewer' } },
    { ownerAccountId: owner.account_id, deniedRoles: ['viewer', 'developer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'PATCH', path: `${base}/members/${target.user_id}`, body: { role: 'developer' } },
    { ownerAccountId: owner.account_id, deniedRoles: ['viewer', 'developer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'DELETE', path: `${base}/members/${target.user_id}` },
    { ownerAccountId: owner.account_id, deniedRoles: ['viewer', 'developer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'DELETE', path: `${base}/invitations/inv_aaaaaaaaaaaaaaaaaaaa` },
    { ownerAccountId: owner.account_id, deniedRoles: ['viewer', 'developer'] },
  );
});

test('an invitation by e-mail: a newcomer signs up through it and joins with the role', async () => {
  const owner = await newUser(h);
  const email = uniqueEmail('invitee');
  const inv = await h.call('POST', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
    body: { email, role: 'developer' },
  });
  assert.is(inv.status, 201, inv.text);
  assert.match(inv.body.invitation_id, /^inv_/);
  assert.equal({ email: inv.body.email, role: inv.body.role }, { email, role: 'developer' });
  const listed = await h.call('GET', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
  });
  assert.is(listed.body.members.length, 1);
  assert.equal(
    listed.body.invitations.map((i: { email: string }) => i.email),
    [email],
  );
  const again = await h.call('POST', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
    body: { email: listed.body.members[0].email, role: 'viewer' },
  });
  assert.is(again.status, 409, 'a member cannot be invited');

  const mail = await smtp.next(email);
  assert.match(mail.text, 'as developer');
  assert.match(mail.text, 'within 7 days');
  const confirm = await h.call('POST', '/v0/auth/email/confirm', {
    host: CONSOLE,
    body: { token: linkToken(mail.text) },
  });
  assert.is(confirm.body.status, 'signup_required');
  const pending = confirm.headers.getSetCookie()[0]!.split(';')[0]!;
  const done = await h.call('POST', '/v0/auth/signup/complete', {
    host: CONSOLE,
    headers: { cookie: pending },
    body: { username: `invitee-${Date.now() % 100000}` },
  });
  assert.is(done.status, 201, done.text);
  const session = await h.call('GET', '/v0/platform/session', {
    host: CONSOLE,
    headers: { cookie: done.headers.getSetCookie()[0]!.split(';')[0]! },
  });
  const roles = Object.fromEntries(
    session.body.accounts.map((a: { account_id: string; role: string }) => [a.account_id, a.role]),
  );
  assert.is(roles[owner.account_id], 'developer', 'joined the inviting account');
  assert.is(roles[done.body.default_account_id], 'owner', 'and has an account of their own');
  const after = await h.call('GET', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
  });
  assert.is(after.body.members.length, 2);
  assert.is(after.body.invitations.length, 0);
});

test('an existing user accepts by signing in; a withdrawn invitation no longer works', async () => {
  const owner = await newUser(h);
  const friend = await newUser(h, 'friend');
  const friendEmail = (
    await h.deps.db
      .selectFrom('users')
      .select('email')
      .where('id', '=', friend.user_id)
      .executeTakeFirstOrThrow()
  ).email;
  await h.call('POST', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
    body: { email: friendEmail, role: 'viewer' },
  });
  const c = await h.call('POST', '/v0/auth/email/confirm', {
    host: CONSOLE,
    body: { token: linkToken((await smtp.next(friendEmail)).text) },
  });
  assert.is(c.body.status, 'signed_in');
  assert.is(
    (await h.call('GET', `/v0/apps`, { key: friend.api_key, account: owner.account_id })).status,
    200,
    'the existing key now reaches the account',
  );

  const other = uniqueEmail('withdrawn');
  const inv = await h.call('POST', `/v0/accounts/${owner.account_id}/members`, {
    key: owner.api_key,
    body: { email: other, role: 'admin' },
  });
  const gone = await h.call(
    'DELETE',
    `/v0/accounts/${owner.account_id}/invitations/${inv.body.invitation_id}`,
    { key: owner.api_key },
  );
  assert.equal(gone.body, {
    account_id: owner.account_id,
    invitation_id: inv.body.invitation_id,
    revoked: true,
  });
  const r = await h.call('POST', '/v0/auth/email/confirm', {
    host: CONSOLE,
    body: { token: linkToken((await smtp.next(other)).text) },
  });
  assert.is(r.status, 400);
  assert.is(r.body.error.code, 'invalid_email_auth_token');
});

test('roles: an admin cannot make or remove an owner; the last owner stays; removal cuts access at once', async () => {
  const owner = await newUser(h);
  const admin = await newMember(h, owner.account_id, 'admin');
  const dev = await newMember(h, owner.account_id, 'developer');
  const base = `/v0/accounts/${owner.account_id}/members`;

  const promote = await h.call('PATCH', `${base}/${dev.user_id}`, {
    key: admin.api_key,
    body: { role: 'owner' },
  });
  assert.is(promote.status, 403);
  assert.is(
    (
      await h.call('POST', base, {
        key: admin.api_key,
        body: { email: uniqueEmail('o'), role: 'owner' },
      })
    ).status,
    403,
    'an admin cannot invite an owner',
  );
  assert.is(
    (await h.call('DELETE', `${base}/${owner.user_id}`, { key: admin.api_key })).status,
    403,
  );
  const demoteSelf = await h.call('PATCH', `${base}/${owner.user_id}`, {
    key: owner.api_key,
    body: { role: 'admin' },
  });
  assert.is(demoteSelf.status, 409);
  assert.is(demoteSelf.body.error.code, 'last_owner');
  assert.is(
    (await h.call('DELETE', `${base}/${owner.user_id}`, { key: owner.api_key })).body.error.code,
    'last_owner',
  );

  const changed = await h.call('PATCH', `${base}/${dev.user_id}`, {
    key: admin.api_key,
    body: { role: 'viewer' },
  });
  assert.is(changed.status, 200);
  assert.is(changed.body.role, 'viewer');

  // a second owner makes the first removable
  assert.is(
    (
      await h.call('PATCH', `${base}/${admin.user_id}`, {
        key: owner.api_key,
        body: { role: 'owner' },
      })
    ).body.role,
    'owner',
  );
  assert.is(
    (
      await h.call('PATCH', `${base}/${owner.user_id}`, {
        key: owner.api_key,
        body: { role: 'developer' },
      })
    ).status,
    200,
  );
  const accounts = await h.call('GET', '/v0/accounts', { key: admin.api_key });
  assert.is(
    accounts.body.accounts.find((a: { id: string }) => a.id === owner.account_id).owner_user_id,
    admin.user_id,
    'the recorded owner follows',
  );

  assert.is(
    (await h.call('GET', '/v0/apps', { key: dev.api_key, account: owner.account_id })).status,
    200,
  );
  const removed = await h.call('DELETE', `${base}/${dev.user_id}`, { key: admin.api_key });
  assert.equal(removed.body, { account_id: owner.account_id, user_id: dev.user_id, removed: true });
  assert.is(
    (await h.call('GET', '/v0/apps', { key: dev.api_key, account: owner.account_id })).status,
    404,
    'the key no longer reaches the account',
  );
  assert.is(
    (await h.call('GET', '/v0/accounts', { key: dev.api_key })).status,
    200,
    'but stays theirs',
  );
  // any member may leave
  const viewer = await newMember(h, owner.account_id, 'viewer');
  assert.is(
    (await h.call('DELETE', `${base}/${viewer.user_id}`, { key: viewer.api_key })).status,
    200,
  );
  assert.is((await h.call('GET', base, { key: viewer.api_key })).status, 404);
});

test('inviting an open address again is refused with the open invitation; invitation mails share the per-address limit', async () => {
  const owner = await newUser(h);
  const base = `/v0/accounts/${owner.account_id}/members`;
  const email = uniqueEmail('once');
  const first = await h.call('POST', base, { key: owner.api_key, body: { email, role: 'viewer' } });
  assert.is(first.status, 201, first.text);
  const again = await h.call('POST', base, { key: owner.api_key, body: { email, role: 'admin' } });
  assert.is(again.status, 409);
  assert.is(again.body.error.code, 'conflict');
  assert.is(again.body.error.details.invitation_id, first.body.invitation_id);
  await smtp.next(email);
  assert.is(
    smtp.received.filter((m) => m.to.includes(email)).length,
    0,
    'one mail, not one per request',
  );

  // withdrawing and inviting again, over and over, is bounded by the address's mail budget
  const target = uniqueEmail('cycled');
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await h.call('POST', base, {
      key: owner.api_key,
      body: { email: target, role: 'viewer' },
    });
    statuses.push(r.status);
    if (r.status === 201)
      await h.call(
        'DELETE',
        `/v0/accounts/${owner.account_id}/invitations/${r.body.invitation_id}`,
        {
          key: owner.api_key,
        },
      );
  }
  assert.equal(statuses.slice(0, 5), [201, 201, 201, 201, 201]);
  assert.equal(statuses.slice(5), [429, 429, 429], "the sign-in mails' per-address limit");
  // and a sign-in link to that address is refused too: the budget is shared
  const link = await h.call('POST', '/v0/auth/email/request', {
    host: CONSOLE,
    body: { email: target },
    client: '127.0.0.77',
  });
  assert.is(link.status, 429);
});

test.after(async () => {
  await worker.stop();
  await h.close();
  await smtp.close();
});
test.run();
