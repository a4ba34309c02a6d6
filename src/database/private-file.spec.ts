import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPrivateFile } from './data-source';

describe('createPrivateFile (the SQLite file)', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-dbfile-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates the file 0600, and tightens one of ours that others could read', () => {
    const file = path.join(dir, 'sub', 'trendhooks.db');
    createPrivateFile(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.chmodSync(file, 0o644);
    createPrivateFile(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('neither opens nor creates through a symbolic link, dangling or not', () => {
    const target = path.join(dir, 'elsewhere.db');
    fs.writeFileSync(target, '', { mode: 0o600 });
    const link = path.join(dir, 'trendhooks.db');
    fs.symlinkSync(target, link);
    expect(() => createPrivateFile(link)).toThrow(`SQLite file ${link} is a symbolic link`);
    const dangling = path.join(dir, 'planted.db');
    const victim = path.join(dir, 'victim.db');
    fs.symlinkSync(victim, dangling);
    expect(() => createPrivateFile(dangling)).toThrow('is a symbolic link');
    expect(fs.existsSync(victim)).toBe(false);
  });

  it('refuses a -wal file planted as a symbolic link beside the database', () => {
    const file = path.join(dir, 'trendhooks.db');
    fs.symlinkSync(path.join(dir, 'victim'), `${file}-wal`);
    expect(() => createPrivateFile(file)).toThrow(`SQLite file ${file}-wal is a symbolic link`);
  });

  (process.getuid?.() === 0 ? it : it.skip)('refuses a database file owned by another user', () => {
    const file = path.join(dir, 'trendhooks.db');
    fs.writeFileSync(file, '', { mode: 0o600 });
    fs.chownSync(file, 65534, 65534);
    expect(() => createPrivateFile(file)).toThrow(`SQLite file ${file} belongs to uid 65534`);
  });
});
