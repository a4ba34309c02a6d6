import { generateEncryptionKey } from '../../src/crypto/key-ring';
import { SecretBox } from '../../src/crypto/secret-box';
import { SettingEntity } from '../../src/settings/setting.entity';
import { CursorKeys } from '../../src/pagination/cursor-keys';
import { SettingsStore } from '../../src/settings/settings.store';
import { testDatabases } from '../support/databases';
import { databaseFixture } from './store-fixture';

/**
 * The settings table's one owner is SettingsStore; CursorKeys (the generated cursor secret) and
 * SecretBox (key check values) ask it. These check that it behaves the same on both databases.
 */
describe.each(testDatabases())('settings (the stored cursor secret) on %s', (_name, makeDb) => {
  const f = databaseFixture(makeDb);
  const key = generateEncryptionKey();
  const box = (...keys: ReturnType<typeof generateEncryptionKey>[]) => new SecretBox({ keys }, f.ds);
  const cursorKeys = (secrets: SecretBox) => new CursorKeys({}, new SettingsStore(f.ds), secrets);
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

  it('SettingsStore: insert-if-absent (first wins), compare-and-set, and LIKE sampling with escapes', async () => {
    const store = new SettingsStore(f.ds);
    expect(await store.exists()).toBe(true);
    expect(await store.get('t:a')).toBeNull();
    await store.insertIfAbsent('t:a', 'first');
    await store.insertIfAbsent('t:a', 'second');
    expect(await store.get('t:a')).toBe('first');
    expect(await store.replace('t:a', 'stale', 'x')).toBe(false);
    expect(await store.replace('t:a', 'first', 'third')).toBe(true);
    expect(await store.get('t:a')).toBe('third');
    await store.insertIfAbsent('t:b', 'p_1%');
    await store.insertIfAbsent('t:c', 'pX1y');
    // `_` and `%` escaped match themselves only.
    expect((await store.valuesLike('p\\_1\\%', [], 10)).map((r) => r.key)).toEqual(['t:b']);
    expect((await store.valuesLike('p%', ['p\\_%'], 10)).map((r) => r.key)).toEqual(['t:c']);
    expect(await store.valuesLike('p%', [], 1)).toHaveLength(1);
  });
});
