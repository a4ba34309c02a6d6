import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource } from 'typeorm';
import { CRYPTO_OPTIONS, CryptoModuleOptions } from './crypto.options';
import { loadOrCreateKeyFile } from './key-file';
import { ENCRYPTED_PREFIX, EncryptionKeyRing, generateEncryptionKey, SecretDecryptionError } from './key-ring';

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

  constructor(
    @Inject(CRYPTO_OPTIONS) options: CryptoModuleOptions,
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
  ) {
    if (options.keys?.length) this.ring = new EncryptionKeyRing(options.keys);
    else if (options.keyFile) this.ring = new EncryptionKeyRing(loadOrCreateKeyFile(options.keyFile).keys);
    // Neither (an in-memory SQLite database, e.g. the OpenAPI generator): nothing outlives the process, nor may its key.
    else this.ring = new EncryptionKeyRing([generateEncryptionKey()]);
  }

  encrypt(plain: string, context: string): string {
    return this.ring.encrypt(plain, context);
  }

  /** Cached by stored value and context: AES-GCM per attempt is cheap, but not free at thousands of attempts a second. */
  decrypt(stored: string, context: string): string {
    const cacheKey = `${context}\n${stored}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const plain = this.ring.decrypt(stored, context);
    // A value stored in clear (from before encryption) costs nothing to "decrypt": not worth a slot.
    if (plain !== stored) this.cache.set(cacheKey, plain);
    return plain;
  }

  async onModuleInit(): Promise<void> {
    await this.verifyDatabase();
  }

  /**
   * One encrypted value per key id found in the database must decrypt, or the process stops with
   * one line saying which key is missing or wrong: starting would only fail every delivery.
   */
  async verifyDatabase(): Promise<void> {
    if (!this.ds.isInitialized) return;
    let rows: StoredValue[];
    try {
      rows = await this.sampleEncryptedValues();
    } catch (err) {
      // A host app that has not migrated yet has no tables to check.
      if (/no such table|does not exist/i.test((err as Error).message)) return;
      throw err;
    }
    for (const r of rows) {
      try {
        this.ring.decrypt(r.stored, r.kind === 'setting' ? `setting:${r.id}` : `webhook:${r.id}`);
      } catch (err) {
        if (!(err instanceof SecretDecryptionError)) throw err;
        throw new Error(`cannot start: the database holds secrets this process cannot decrypt (${err.message}); configure the key ring they were written with (ENCRYPTION_KEYS or ENCRYPTION_KEY_FILE)`);
      }
    }
    const plaintext = await this.countPlaintext();
    if (plaintext > 0) this.logger.warn(`${plaintext} webhook secret(s) are still stored in clear; run "trendhooks encryption reencrypt" to encrypt them`);
  }

  /** For each key id in use: a value under an id the ring lacks, if any, and one under each id it has. */
  private async sampleEncryptedValues(): Promise<StoredValue[]> {
    const ids = this.ring.keyIds;
    const prefix = (id: string) => `${escapeLike(ENCRYPTED_PREFIX + id)}:%`;
    const out: StoredValue[] = [];
    for (const [col, table, idCol, kind] of STORED_SECRET_COLUMNS) {
      // A host database without the optional `settings` feature has no such table: its other columns are still checked.
      if (table === 'settings' && !(await this.hasTable(table))) continue;
      const unknown = [`${col} LIKE ${this.param(0)} ESCAPE '\\'`, ...ids.map((_, i) => `${col} NOT LIKE ${this.param(i + 1)} ESCAPE '\\'`)].join(' AND ');
      const sql = (where: string) => `SELECT ${idCol} AS id, ${col} AS stored, '${kind}' AS kind FROM ${table} WHERE ${where} LIMIT 1`;
      out.push(...((await this.ds.query(sql(unknown), [`${escapeLike(ENCRYPTED_PREFIX)}%`, ...ids.map(prefix)])) as StoredValue[]));
      for (const id of ids) out.push(...((await this.ds.query(sql(`${col} LIKE ${this.param(0)} ESCAPE '\\'`), [prefix(id)])) as StoredValue[]));
    }
    return out;
  }

  private async hasTable(name: string): Promise<boolean> {
    const rows: unknown[] =
      this.ds.options.type === 'postgres'
        ? await this.ds.query('SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1', [name])
        : await this.ds.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]);
    return rows.length > 0;
  }

  private param(i: number): string {
    return this.ds.options.type === 'postgres' ? `$${i + 1}` : '?';
  }

  private async countPlaintext(): Promise<number> {
    const rows: { n: string | number }[] = await this.ds.query(`SELECT COUNT(*) AS n FROM webhooks WHERE secret NOT LIKE ${this.param(0)} ESCAPE '\\'`, [`${escapeLike(ENCRYPTED_PREFIX)}%`]);
    return Number(rows[0]?.n ?? 0);
  }
}

interface StoredValue {
  id: string;
  stored: string;
  kind: 'webhook' | 'setting';
}

/** Where encrypted secrets live: column, table, row id column, context kind. */
const STORED_SECRET_COLUMNS = [
  ['secret', 'webhooks', 'id', 'webhook'],
  ['previous_secret', 'webhooks', 'id', 'webhook'],
  ['value', 'settings', 'key', 'setting'],
] as const;

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
