import { Injectable } from '@nestjs/common';
import { QueueWaker } from './queue-waker';

/** Wake-ups within this process only: on SQLite the workers that could hear more share the file's one process. */
@Injectable()
export class InProcessWaker extends QueueWaker {
  private readonly listeners: (() => void)[] = [];

  onWake(cb: () => void): void {
    this.listeners.push(cb);
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  wake(): void {
    for (const cb of this.listeners) cb();
  }
}
