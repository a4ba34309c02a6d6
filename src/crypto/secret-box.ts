import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { dialectOf } from '../database/dialect';
import { DataSource } from 'typeorm';
import { SettingsStore } from '../settings/settings.store';
import { CRYPTO_OPTIONS, CryptoModuleOptions } from './crypto.options';
import { loadOrCreateKeyFile } from './key-file';
import { ENCRYPTED_PREFIX, EncryptionKey, EncryptionKeyRing, generateEncryptionKey, isKeyId, keyIdOf, SecretDecryptionError, SecretPlace } from './key-ring';
import { StoredSecrets, StoredSecretValue } from './stored-secrets';

/** Decrypted values kept in memory: the delivery worker signs every attempt with one. */
const CACHE_MAX = 10_000;

/**
 * The key ring as a service: encrypts secrets before they are stored, decrypts them where they are
 * used (the delivery worker, the cursor keys), and refuses to start on a database whose encrypted
 * rows no key of the ring can open.
 */
@Injectable()
export class SecretBox implements OnModuleInit {
  private readonly logger = new Logger('SecretBox');
  readonly ring: EncryptionKeyRing;
  /**
   * Least recently used dropped first. Not a Map trimmed from its front: a fan-out to more webhooks
   * than CACHE_MAX evicts on every attempt, and deleting a Map's oldest keys leaves holes that its
   * iteration skips: 4.4 µs per miss at 10,000 entries, against 0.5 µs here.
   */
  private readonly cache = new LRUCache<string, string>({ max: CACHE_MAX });
  /** The `settings` table's owner: the key check values are asked of it, never written here in SQL. */
  private readonly settings: SettingsStore;
  /** `settings` as a table of secrets (the cursor secret, the key check values). */
  private readonly settingSecrets: StoredSecrets;
  /** The other tables holding secrets, as their owners show them (holdSecretsIn). */
  private readonly tables: StoredSecrets[] = [];

  constructor(
    @Inject(CRYPTO_OPTIONS) options: CryptoModuleOptions,
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
    @Optional() settings?: SettingsStore,
  ) {
    this.settings = settings ?? new SettingsStore(ds);
    this.settingSecrets = new SettingSecrets(this.settings);
    // An empty ring given (ENCRYPTION_KEYS unset in a host's settings) is a mistake, not "generate one": a
    // key made up here would leave every stored secret unreadable after the next restart.
    if (options.keys && options.keys.length === 0 && !options.keyFile) {
      throw new Error("ENCRYPTION_KEYS (CryptoModule's keys) is empty: give at least one key, id:base64key (k1:$(openssl rand -base64 32)), or keyFile");
    }
    if (options.keys?.length) this.ring = ringOf(options.keys);
    else if (options.keyFile) this.ring = new EncryptionKeyRing(loadOrCreateKeyFile(options.keyFile).keys);
    // Neither (an in-memory SQLite database, e.g. the OpenAPI generator): nothing outlives the process, nor may its key.
    else this.ring = new EncryptionKeyRing([generateEncryptionKey()]);
  }

  /**
   * A table whose owner stores secrets encrypted here (delivery's `webhooks`): the startup check
   * samples it through `table`. Called from the owner's constructor, so before onModuleInit.
   */
  holdSecretsIn(table: StoredSecrets): void {
    if (!this.tables.includes(table)) this.tables.push(table);
  }

  encrypt(plain: string, place: SecretPlace): string {
    return this.ring.encrypt(plain, place);
  }

  /** Cached by stored value and place: AES-GCM per attempt is cheap, but not free at thousands of attempts a second. */
  decrypt(stored: string, place: SecretPlace): string {
    const cacheKey = `${place.column}\n${place.row}\n${stored}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const plain = this.ring.decrypt(stored, place);
    // A value stored in clear (from before encryption) costs nothing to "decrypt": not worth a slot.
    if (plain !== stored) this.cache.set(cacheKey, plain);
    return plain;
  }

  async onModuleInit(): Promise<void> {
    await this.verifyDatabase();
  }

  /**
   * Refuses to start only when the key ring is wrong: a key id used in the database under which
   * no stored value decrypts (the ring lacks that id, or holds another key under it). Starting
   * would only fail every delivery of those webhooks. One value that does not decrypt while others
   * under its key id do is a damaged row, not a wrong ring: the process starts, that webhook's
   * deliveries fail as `secret_unreadable`, and `trendhooks encryption reencrypt` lists it.
   */
  async verifyDatabase(): Promise<void> {
    // An unsupported driver is refused at boot, before any SQL is written for it.
    dialectOf(this.ds);
    if (!this.ds.isInitialized) return;
    let columns: readonly StoredSecretColumn[];
    try {
      columns = await this.presentColumns();
    } catch (err) {
      // A host app that has not migrated yet has no tables to check.
      if (/no such table|does not exist/i.test((err as Error).message)) return;
      throw err;
    }
    const problems: string[] = [];
    const damaged: StoredValue[] = [];
    // Key ids whose key is proven (a value under it decrypts) or not yet used: each gets a key check value.
    const fitting: string[] = [];
    for (const id of this.ring.keyIds) {
      const checked: StoredValue[] = [];
      const bad: StoredValue[] = [];
      for (const c of columns) {
        const rows = await this.sample(c, keyIdPattern(id), []);
        checked.push(...rows);
        bad.push(...rows.filter((r) => !this.opens(r)));
      }
      if (checked.length > 0 && bad.length === checked.length) {
        problems.push(`no stored secret under key id "${id}" decrypts (${checked.length} checked: ${describeValues(checked)}), so the ring holds another key under that id`);
      } else {
        damaged.push(...bad);
        fitting.push(id);
      }
    }
    // Values under a key id the ring lacks: none of them can decrypt, so the ring misses a key. A
    // value whose version or key id no ring could hold is a damaged row, not a missing key.
    const missing = new Map<string, StoredValue[]>();
    for (const c of columns) {
      for (const r of await this.sample(c, `${escapeLike(ENCRYPTED_PREFIX)}%`, this.ring.keyIds.map(keyIdPattern))) {
        const id = keyIdOf(r.stored);
        // The check value of a key dropped from the ring after its rotation: nothing uses that key.
        if (r.place.startsWith(`setting:${KEY_CHECK_PREFIX}`)) continue;
        if (id === null || !isKeyId(id)) damaged.push(r);
        else missing.set(id, [...(missing.get(id) ?? []), r]);
      }
    }
    for (const [id, rows] of missing) problems.push(`stored secrets are encrypted under key id "${id}", which is not in the key ring (${describeValues(rows)})`);
    if (problems.length > 0) {
      throw new EncryptionRingError(`cannot start: the database holds secrets this process cannot decrypt: ${problems.join('; ')}; configure the key ring they were written with (ENCRYPTION_KEYS or ENCRYPTION_KEY_FILE)`);
    }
    for (const r of damaged) {
      this.logger.error(`the stored ${r.column} of ${r.place} does not decrypt (damaged or altered); its deliveries fail as secret_unreadable until it is rotated or restored ("trendhooks encryption reencrypt" lists every such row)`);
    }
    if (columns.some((c) => c.table === this.settingSecrets)) await this.writeKeyChecks(fitting);
    for (const table of new Set(columns.map((c) => c.table))) {
      const plaintext = await table.countCurrentNotLike(`${escapeLike(ENCRYPTED_PREFIX)}%`);
      if (plaintext > 0) this.logger.warn(`${plaintext} ${table.kind} secret(s) are still stored in clear; run "trendhooks encryption reencrypt" to encrypt them`);
    }
  }

  /**
   * A key check value per key id of the ring that fits the database: a constant encrypted under
   * that key, kept in `settings`. It is one more value under its key id for the check above, so
   * stored secrets that do not decrypt (say, the rows `reencrypt` left under an old key) never
   * make the ring look wrong while its key still opens the check value; and a key id only known
   * to the ring so far is pinned to the key it has now.
   */
  private async writeKeyChecks(ids: string[]): Promise<void> {
    for (const id of ids) {
      const key = `${KEY_CHECK_PREFIX}${id}`;
      const value = this.ring.encrypt(KEY_CHECK_PLAIN, { row: `setting:${key}`, column: 'value' }, id);
      await this.settings.insertIfAbsent(key, value);
    }
  }

  private opens(r: StoredValue): boolean {
    try {
      this.ring.decrypt(r.stored, { row: r.place, column: r.column });
      return true;
    } catch (err) {
      if (err instanceof SecretDecryptionError) return false;
      throw err;
    }
  }

  /** Up to SAMPLE values of one column matching the LIKE pattern `like` and none of `notLike`, asked of the table's owner. */
  private async sample(c: StoredSecretColumn, like: string, notLike: string[]): Promise<StoredValue[]> {
    return (await c.table.sample(c.column, like, notLike, SAMPLE)).map((r) => ({ place: `${c.table.kind}:${r.id}`, column: c.column, stored: r.stored }));
  }

  /** The secret columns of this database: the owners' tables, then `settings` unless a host database left that optional feature out. */
  private async presentColumns(): Promise<readonly StoredSecretColumn[]> {
    const out: StoredSecretColumn[] = [];
    for (const table of [...this.tables, this.settingSecrets]) if (await table.present()) out.push(...table.columns.map((column) => ({ table, column })));
    return out;
  }
}

/** `settings` as a table of secrets, through its store (crypto sits above settings, so it adapts it here). */
class SettingSecrets extends StoredSecrets {
  readonly kind = 'setting';
  readonly columns = ['value'];

  constructor(private readonly settings: SettingsStore) {
    super();
  }

  present(): Promise<boolean> {
    return this.settings.exists();
  }

  async sample(_column: string, like: string, notLike: readonly string[], limit: number): Promise<StoredSecretValue[]> {
    return (await this.settings.valuesLike(like, notLike, limit)).map((r) => ({ id: r.key, stored: r.value }));
  }

  /** Not every setting is a secret; the cursor secret in clear is re-encrypted by CursorKeys on its own. */
  async countCurrentNotLike(): Promise<number> {
    return 0;
  }
}

/** Settings rows holding a key check value: `key_check:<key id>`. */
const KEY_CHECK_PREFIX = 'key_check:';
const KEY_CHECK_PLAIN = 'trendhooks key check';

/** Values checked per key id and column at start. */
const SAMPLE = 20;

interface StoredValue {
  /** The row part of its place (`webhook:<id>`, `setting:<key>`). */
  place: string;
  column: string;
  stored: string;
}

/** One secret column of one table. */
interface StoredSecretColumn {
  table: StoredSecrets;
  column: string;
}

/** The startup check's refusal: the key ring does not fit the database. Its message names the key ids and rows. */
export class EncryptionRingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncryptionRingError';
  }
}

/** LIKE pattern of the values under one key id, in any version (`enc:v1:<id>:…`, `enc:v2:<id>:…`). */
function keyIdPattern(id: string): string {
  return `${escapeLike('enc:v')}_${escapeLike(`:${id}:`)}%`;
}

/** A few of the values, by row and column, for a message (never the value itself). */
function describeValues(rows: StoredValue[]): string {
  const shown = rows.slice(0, 5).map((r) => `${r.place} ${r.column}`);
  return rows.length > shown.length ? `${shown.join(', ')} and others` : shown.join(', ');
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The key ring of the keys a host gave, its errors naming the setting they came from. */
function ringOf(keys: readonly EncryptionKey[]): EncryptionKeyRing {
  try {
    return new EncryptionKeyRing(keys);
  } catch (err) {
    throw new Error(`ENCRYPTION_KEYS (CryptoModule's keys): ${(err as Error).message}`, { cause: err });
  }
}
