/** The options TrendhooksModule was built with (after forRootAsync's factory ran). */
export const TRENDHOOKS_OPTIONS = Symbol('trendhooks:options');
