import * as fs from 'node:fs';
import * as path from 'node:path';
import { EncryptionKey, generateEncryptionKey, parseKeyEntries } from './key-ring';

/**
 * The embedded default's key ring: a file kept apart from the database (a stolen database
 * backup without it holds only ciphertext). Written on first start, 0600, in the ENCRYPTION_KEYS
 * spelling, one `id:base64key` per line, newest first (`#` lines are comments), so an operator
 * rotates by putting a new line on top.
 *
 * Read without following a symbolic link (O_NOFOLLOW), and only when it is a regular file owned by
 * this process's user with no group or other permission: a file another user planted, or could
 * read, or a link to one, is refused with a message saying why (a key others could read is no
 * longer secret: tightening its mode would hide that).
 */
export function loadOrCreateKeyFile(file: string): { keys: EncryptionKey[]; created: boolean } {
  let created = false;
  // lstat, not exists: a dangling link is there too, and must not be written through.
  if (!lstatOrNull(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const { entry } = generateEncryptionKey();
    // Written whole under a temporary name, then linked into place: processes starting at once
    // all try, one link wins, and no process ever reads a half-written file. Neither `wx` nor
    // link(2) follows a link at the target.
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
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`encryption key file ${file} is a symbolic link; point ENCRYPTION_KEY_FILE at the file itself`, { cause: err });
    throw keyFileError(file, err);
  }
  try {
    const problem = privateFileProblem(fs.fstatSync(fd));
    if (problem) throw new Error(`encryption key file ${file} ${problem}`);
    text = fs.readFileSync(fd, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err;
    throw keyFileError(file, err);
  } finally {
    fs.closeSync(fd);
  }
  const body = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .join('\n');
  try {
    return { keys: parseKeyEntries(body), created };
  } catch (err) {
    throw new Error(`encryption key file ${file}: ${(err as Error).message}`, { cause: err });
  }
}

function keyFileError(file: string, err: unknown): Error {
  return new Error(`encryption key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw keyFileError(file, err);
  }
}

/**
 * Why a file holding a secret must not be used, or null: not a regular file, owned by another
 * user (it could have been planted, or be read or changed by its owner), or open to group or
 * others. Where there are no uids (Windows), ownership and modes are not checked.
 */
export function privateFileProblem(st: fs.Stats): string | null {
  if (!st.isFile()) return 'is not a regular file';
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (st.uid !== uid) return `belongs to uid ${st.uid}, not to this process's user (uid ${uid}); refusing a file another user could have planted`;
  if ((st.mode & 0o077) !== 0) return `has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}: group or others may read it, so its keys may be known; run chmod 600 on it after rotating to a new key if others did read it`;
  return null;
}
