import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../database/data-source.token';
import { DataSource } from 'typeorm';
import type { SecretPlace } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { SettingEntity } from './setting.entity';
import { CursorKeyRing } from './cursor-codec';
import { PAGINATION_OPTIONS, PaginationModuleOptions } from './pagination.options';

const SETTING_KEY = 'cursor_secret';
/** Where the generated secret is stored, bound into its ciphertext. */
const PLACE: SecretPlace = { row: `setting:${SETTING_KEY}`, column: 'value' };

/**
 * The cursor key ring: from CURSOR_SECRET when set; otherwise a secret generated on first use and
 * stored in the database (encrypted by SecretBox), so cursors survive restarts and are shared by every instance.
 * Loaded lazily (first list request), after migrations have run.
 */
@Injectable()
export class CursorKeys {
  private ring?: Promise<CursorKeyRing>;

  constructor(
    @Inject(PAGINATION_OPTIONS) private readonly options: PaginationModuleOptions,
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
    private readonly secrets: SecretBox,
  ) {}

  get(): Promise<CursorKeyRing> {
    if (!this.ring) {
      this.ring = this.load();
      this.ring.catch(() => (this.ring = undefined)); // retry on the next request after a database hiccup
    }
    return this.ring;
  }

  private async load(): Promise<CursorKeyRing> {
    if (this.options.secrets?.length) return CursorKeyRing.fromSecrets(this.options.secrets);
    const repo = this.ds.getRepository(SettingEntity);
    const existing = await repo.findOneBy({ key: SETTING_KEY });
    if (existing) return CursorKeyRing.fromSecrets([this.secrets.decrypt(existing.value, PLACE)]);
    // Two processes may race here: both insert-or-ignore, then both read the winner.
    const value = this.secrets.encrypt(randomBytes(32).toString('base64url'), PLACE);
    await repo.createQueryBuilder().insert().values({ key: SETTING_KEY, value }).orIgnore().execute();
    const stored = await repo.findOneByOrFail({ key: SETTING_KEY });
    return CursorKeyRing.fromSecrets([this.secrets.decrypt(stored.value, PLACE)]);
  }

  /**
   * Re-encrypts the stored cursor secret under the newest key (plaintext from before encryption
   * included). Compare-and-set, so it is safe beside running processes. True when it changed.
   */
  async reencrypt(): Promise<boolean> {
    const repo = this.ds.getRepository(SettingEntity);
    let existing: SettingEntity | null;
    try {
      existing = await repo.findOneBy({ key: SETTING_KEY });
    } catch (err) {
      // A host database without the optional `settings` feature keeps no cursor secret to rewrite.
      if (/no such table|does not exist/i.test((err as Error).message)) return false;
      throw err;
    }
    if (!existing || this.secrets.ring.isCurrent(existing.value)) return false;
    const value = this.secrets.encrypt(this.secrets.decrypt(existing.value, PLACE), PLACE);
    const res = await repo.update({ key: SETTING_KEY, value: existing.value }, { value });
    return (res.affected ?? 0) > 0;
  }
}
