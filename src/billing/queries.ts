/** The account's Stripe link and subscription snapshot, provider event ids, and the billing history. */
import type { Executor } from '../db/database.ts';

export async function billingRow(db: Executor, accountId: string) {
  return db
    .selectFrom('account_billing')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function accountOfCustomer(
  db: Executor,
  customerId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('account_billing')
    .select('account_id')
    .where('stripe_customer_id', '=', customerId)
    .executeTakeFirst();
  return row?.account_id;
}

/** Links an account to its Stripe customer (the first link stays: one customer per account). */
export async function linkCustomer(
  db: Executor,
  accountId: string,
  customerId: string,
): Promise<void> {
  await db
    .insertInto('account_billing')
    .values({ account_id: accountId, stripe_customer_id: customerId, subscription: null })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
}

export async function saveSnapshot(
  db: Executor,
  accountId: string,
  subscription: unknown,
  unknownPriceId: string | null,
): Promise<void> {
  await db
    .updateTable('account_billing')
    .set({
      subscription: subscription === null ? null : JSON.stringify(subscription),
      unknown_price_id: unknownPriceId,
      synced_at: new Date(),
    })
    .where('account_id', '=', accountId)
    .execute();
}

/** Records a provider event id; false when it was recorded before (a replay). */
export async function claimStripeEvent(
  db: Executor,
  event: { id: string; type: string; accountId: string | null },
): Promise<boolean> {
  const row = await db
    .insertInto('stripe_events')
    .values({ id: event.id, type: event.type, account_id: event.accountId })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function addHistory(
  db: Executor,
  row: {
    account_id: string;
    source: string;
    stripe_event_id: string | null;
    from_plan_key: string;
    to_plan_key: string;
    from_state: string;
    to_state: string;
  },
): Promise<void> {
  await db.insertInto('billing_history').values(row).execute();
}

export async function enableBillingRoutes(db: Executor, accountId: string): Promise<number> {
  const r = await db
    .updateTable('app_routes')
    .set({ status: 'active', disabled_reason: null, updated_at: new Date() })
    .where('account_id', '=', accountId)
    .where('status', '=', 'disabled_billing')
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function accountsWithCustomers(db: Executor): Promise<string[]> {
  const rows = await db
    .selectFrom('account_billing')
    .select('account_id')
    .orderBy('account_id')
    .execute();
  return rows.map((r) => r.account_id);
}

export async function accountOwner(db: Executor, accountId: string) {
  return db
    .selectFrom('accounts')
    .innerJoin('users', 'users.id', 'accounts.owner_user_id')
    .select(['accounts.id', 'accounts.name', 'users.email'])
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
}
