import { generateEncryptionKey } from '../../src/crypto/key-ring';
import { SecretBox } from '../../src/crypto/secret-box';
import { SettingEntity } from '../../src/pagination/setting.entity';
import { CursorKeys } from '../../src/pagination/cursor-keys';
import { testDatabases } from '../support/databases';
import { databaseFixture } from './store-fixture';

/**
 * The settings table has no store of its own: CursorKeys reads and writes it through TypeORM's
 * dialect-neutral insert-or-ignore. These check that it behaves the same on both databases.
 */
describe.each(testDatabases())('settings (the stored cursor secret) on %s', (_name, makeDb) => {
  const f = databaseFixture(makeDb);
  const key = generateEncryptionKey();
  const box = (...keys: ReturnType<typeof generateEncryptionKey>[]) => new SecretBox({ keys }, f.ds);
  const cursorKeys = (secrets: SecretBox) => new CursorKeys({}, f.ds, secrets);
  const sameRing = async (a: CursorKeys, b: CursorKeys) => {
    const [x, y] = await Promise.all([a.get(), b.get()]);
    return x.signingKey.secret.equals(y.signingKey.secret);
  };

  it('generates the secret once, encrypted, and every process racing for it reads the same one', async () => {
    const instances = Array.from({ length: 6 }, () => cursorKeys(box(key)));
    await Promise.all(instances.map((k) => k.get()));
    for (const k of instances.slice(1)) expect(await sameRing(instances[0], k)).toBe(true);
    const rows = await f.ds.getRepository(SettingEntity).findBy({ key: 'cursor_secret' });
    expect(rows).toHaveLength(1);
    expect(rows[0].value).toMatch(/^enc:v2:/);
  });

  it('re-encrypts the stored secret under a newer key once, keeping the same secret', async () => {
    const before = cursorKeys(box(key));
    await before.get();
    const newer = box(generateEncryptionKey(), key);
    expect(await cursorKeys(newer).reencrypt()).toBe(true);
    expect(await cursorKeys(newer).reencrypt()).toBe(false);
    expect(await sameRing(before, cursorKeys(newer))).toBe(true);
  });
});
