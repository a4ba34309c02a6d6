// Signing secrets belong to the delivery core (src/delivery/secret.ts); this path stays for existing imports.
export * from '../delivery/secret';
