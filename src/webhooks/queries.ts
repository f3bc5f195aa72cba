import type { Executor } from '../db/database.ts';

type Delivery = { appId: string; name: string; deliveryId: string };
const key = (d: Delivery) => d.deliveryId.slice(0, 200);

/** Claims a provider's delivery id for this webhook; false when it was claimed before (a duplicate). */
export async function claimDelivery(db: Executor, d: Delivery): Promise<boolean> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values({ app_id: d.appId, webhook_name: d.name, delivery_id: key(d) })
    .onConflict((oc) => oc.doNothing())
    .returning('delivery_id')
    .executeTakeFirst();
  return !!row;
}

/** Gives a claimed delivery id back, so the provider's retry of a failed delivery gets through. */
export async function releaseDelivery(db: Executor, d: Delivery): Promise<void> {
  await db
    .deleteFrom('webhook_deliveries')
    .where('app_id', '=', d.appId)
    .where('webhook_name', '=', d.name)
    .where('delivery_id', '=', key(d))
    .execute();
}
