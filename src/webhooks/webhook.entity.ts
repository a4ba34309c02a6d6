// The webhooks table is the delivery core's destination storage (src/delivery/webhook.entity.ts);
// this path stays for the webhook API's own files and for existing imports.
export * from '../delivery/webhook.entity';
