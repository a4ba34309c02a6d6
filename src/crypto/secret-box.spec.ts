import type { DataSource } from 'typeorm';
import { UnsupportedDatabaseError } from '../database/dialect';
import { generateEncryptionKey } from './key-ring';
import { SecretBox } from './secret-box';

const at = (id: string) => ({ row: `webhook:${id}`, column: 'secret' });

function box(): SecretBox {
  return new SecretBox({ keys: [generateEncryptionKey()] }, {} as DataSource);
}

describe('SecretBox.decrypt cache', () => {
  it('decrypts a stored value once, then answers from the cache', () => {
    const b = box();
    const stored = b.encrypt('whsec_one', at('w1'));
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('keys the cache on the context too: a value copied to another row still fails', () => {
    const b = box();
    const stored = b.encrypt('whsec_one', at('w1'));
    expect(b.decrypt(stored, at('w1'))).toBe('whsec_one');
    expect(() => b.decrypt(stored, at('w2'))).toThrow(/does not decrypt/);
  });

  it('keeps no slot for a value stored in clear', () => {
    const b = box();
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt('whsec_plain', at('w1'))).toBe('whsec_plain');
    expect(b.decrypt('whsec_plain', at('w1'))).toBe('whsec_plain');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('drops the least recently used value when full, not the oldest one still in use', () => {
    const b = box();
    const hot = b.encrypt('whsec_hot', at('hot'));
    b.decrypt(hot, at('hot'));
    const stored = Array.from({ length: 10_000 }, (_, i) => b.encrypt(`whsec_${i}`, at(String(i))));
    // Full (10,000 entries) with the hot webhook the oldest, then signed again, then one more.
    for (let i = 0; i < 9_999; i++) b.decrypt(stored[i], at(String(i)));
    b.decrypt(hot, at('hot'));
    b.decrypt(stored[9_999], at('9999'));
    const spy = jest.spyOn(b.ring, 'decrypt');
    expect(b.decrypt(hot, at('hot'))).toBe('whsec_hot');
    expect(spy).not.toHaveBeenCalled();
    // The least recently used one went instead.
    expect(b.decrypt(stored[0], at('0'))).toBe('whsec_0');
    expect(spy).toHaveBeenCalledTimes(1);
  });
});

describe('SecretBox on a database trendhooks does not run on', () => {
  it('refuses to start, before any query is written for it as SQLite', async () => {
    const query = jest.fn(async () => []);
    const ds = { options: { type: 'mysql' }, isInitialized: true, query } as unknown as DataSource;
    const b = new SecretBox({ keys: [generateEncryptionKey()] }, ds);
    await expect(b.onModuleInit()).rejects.toThrow(UnsupportedDatabaseError);
    await expect(b.onModuleInit()).rejects.toThrow('this data source uses the "mysql" driver');
    expect(query).not.toHaveBeenCalled();
  });
});
