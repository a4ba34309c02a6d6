/** Injection token for the validated AppConfig of the standalone app. */
export const APP_CONFIG = Symbol('trendhooks:app-config');
