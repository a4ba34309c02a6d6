import { DataSource } from 'typeorm';
import type { PageRequest } from '../../../pagination/page';
import { DeliveryEntity } from '../../delivery.entity';
import { deliveryPageQuery } from '../typeorm-delivery-queue';
import type { DeliveryFilter } from '../types';

/**
 * deliveryPageQuery on SQLite. With a state, the page names idx_deliveries_webhook_state_created
 * (INDEXED BY): without statistics (the app runs no ANALYZE) SQLite weighs it the same as
 * idx_deliveries_webhook_created once `since`, `until` or a cursor bound created_at, and picks the
 * latter, which reads every row of the webhook in the range, of any state.
 */
export function sqliteDeliveryPageQuery(ds: DataSource, webhookId: string, req: PageRequest, filter: DeliveryFilter): [string, unknown[]] {
  const [sql, params] = deliveryPageQuery(ds, webhookId, req, filter).getQueryAndParameters();
  if (filter.state === undefined) return [sql, params];
  const from = 'FROM "deliveries" "d"';
  if (!sql.includes(from)) throw new Error(`delivery page: no ${from} in ${sql}`);
  return [sql.replace(from, `${from} INDEXED BY "idx_deliveries_webhook_state_created"`), params];
}

/** The page's rows as entities, hydrated as getMany would (column transformers included). */
export async function sqliteDeliveryPage(ds: DataSource, webhookId: string, req: PageRequest, filter: DeliveryFilter): Promise<DeliveryEntity[]> {
  const [sql, params] = sqliteDeliveryPageQuery(ds, webhookId, req, filter);
  const rows: Record<string, unknown>[] = await ds.query(sql, params);
  const meta = ds.getMetadata(DeliveryEntity);
  return rows.map((raw) => {
    const d = new DeliveryEntity();
    for (const c of meta.columns) c.setEntityValue(d, ds.driver.prepareHydratedValue(raw[`d_${c.databaseName}`], c));
    return d;
  });
}
