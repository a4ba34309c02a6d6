import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The PEM of a receiver CA file (DELIVERY_CA_FILE), relative paths from `cwd`: read once at boot,
 * so a wrong path stops the process at once. A plain Error says what is wrong with it.
 */
export function readReceiverCa(file: string, cwd: string): string {
  const pem = fs.readFileSync(path.resolve(cwd, file), 'utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${file} holds no PEM certificate`);
  return pem;
}
