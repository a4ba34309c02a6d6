/**
 * How workers hear that deliveries became due (an event fanned out, a manual retry) without
 * waiting for their poll, which stays the fallback. One implementation per database (chosen by
 * `dialectProvider`): in-process only on SQLite (one process owns the file), LISTEN/NOTIFY on
 * PostgreSQL so a worker in another process hears it too.
 */
export abstract class QueueWaker {
  /** `cb` runs on every wake-up heard (this process's, and other processes' where the database carries them). */
  abstract onWake(cb: () => void): void;

  /** Starts listening for other processes' wake-ups (a worker does; an emitter need not). */
  abstract start(): Promise<void>;

  /** Stops listening and gives back what listening holds; before the database pool closes. */
  abstract stop(): Promise<void>;

  /** Deliveries became due: wakes this process's listeners now. */
  abstract wake(): void;
}
