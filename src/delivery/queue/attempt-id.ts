import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// Attempt ids: ULIDs like everywhere else, but ulid's default PRNG asks the OS for one byte per
// character (16 syscalls per id); a pooled buffer does the same from one fill per 4 KiB.
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;
export const attemptUlid = monotonicFactory(() => {
  if (randomAt >= randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++] / 256;
});
