// The one writer of a webhook's last_* fields moved to the delivery core (src/delivery/status/webhook-delivery-status.postgres.ts),
// which provides it; this path stays for existing imports.
export * from '../delivery/status/webhook-delivery-status.postgres';
