import * as fs from 'node:fs';
import * as path from 'node:path';
import { EncryptionKey, generateEncryptionKey, parseEncryptionKeys } from './key-ring';

/**
 * The embedded default's key ring: a file kept apart from the database (a stolen database
 * backup without it holds only ciphertext). Written on first start, 0600, in the ENCRYPTION_KEYS
 * spelling, one `id:base64key` per line, newest first (`#` lines are comments), so an operator
 * rotates by putting a new line on top. A file found with group or other permissions is
 * tightened to 0600.
 */
export function loadOrCreateKeyFile(file: string): { keys: EncryptionKey[]; created: boolean } {
  let created = false;
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const { entry } = generateEncryptionKey();
    // Written whole under a temporary name, then linked into place: processes starting at once
    // all try, one link wins, and no process ever reads a half-written file.
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    try {
      fs.writeFileSync(tmp, `# trendhooks encryption keys (newest first). Back this file up apart from the database.\n${entry}\n`, { mode: 0o600, flag: 'wx' });
      fs.linkSync(tmp, file);
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw keyFileError(file, err);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  let text: string;
  try {
    if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw keyFileError(file, err);
  }
  const body = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .join('\n');
  try {
    return { keys: parseEncryptionKeys(body), created };
  } catch (err) {
    throw new Error(`encryption key file ${file}: ${(err as Error).message}`);
  }
}

function keyFileError(file: string, err: unknown): Error {
  return new Error(`encryption key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
}
