/**
 * The logger and stream types of trendhooks' JSON logs, as the published types name them. pino's
 * own Logger and DestinationStream fit them; they are spelled out here because a host's compiler
 * checks every type a published .d.ts imports, and pino's types need esModuleInterop (TS1259) —
 * a host that did not choose pino would be made to check it (test/packed-host, no esModuleInterop).
 */

/** Where the JSON lines go (pino's DestinationStream). */
export interface LogStream {
  write(line: string): void;
}

/** The levels trendhooks writes at. */
export type LogLineLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

type LogFn = (fields: object, message?: string, ...args: unknown[]) => void;

/** The part of a pino logger trendhooks calls. */
export interface JsonLineLogger extends Record<LogLineLevel, LogFn> {
  isLevelEnabled(level: LogLineLevel): boolean;
  child(bindings: Record<string, unknown>): JsonLineLogger;
}
