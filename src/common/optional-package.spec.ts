import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { assertInstalled, isInstalled, MissingPackageError, requireOptional } from './optional-package';

describe('optional packages', () => {
  it('requires an installed package', () => {
    expect(requireOptional<typeof import('ulid')>('ulid', 'never').ulid).toEqual(expect.any(Function));
    expect(isInstalled('ulid')).toBe(true);
    expect(() => assertInstalled('ulid', 'never')).not.toThrow();
  });

  it('names a missing one in one line: what asked for it and what to install', () => {
    const err = (() => {
      try {
        requireOptional('trendhooks-no-such-package', 'FOO_URL is set');
      } catch (e) {
        return e as MissingPackageError;
      }
    })();
    expect(err).toBeInstanceOf(MissingPackageError);
    expect(err!.message).toBe('FOO_URL is set but the "trendhooks-no-such-package" package is not installed: npm install trendhooks-no-such-package');
    expect(err!.packageName).toBe('trendhooks-no-such-package');
    expect(isInstalled('trendhooks-no-such-package')).toBe(false);
    expect(() => assertInstalled('trendhooks-no-such-package', 'FOO_URL is set')).toThrow(err!.message);
  });

  it('passes on, as it is, the error of an installed package that misses something of its own', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-optional-'));
    try {
      const file = path.join(dir, 'broken.js');
      fs.writeFileSync(file, "require('trendhooks-no-such-inner-package');\n");
      expect(() => requireOptional(file, 'never')).toThrow(expect.objectContaining({ code: 'MODULE_NOT_FOUND', message: expect.stringContaining("'trendhooks-no-such-inner-package'") }));
      expect(() => requireOptional(file, 'never')).not.toThrow(MissingPackageError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
