import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SettingEntity } from '../database/setting.entity';
import { CursorKeyRing } from './cursor-codec';
import { PAGINATION_OPTIONS, PaginationModuleOptions } from './pagination.options';

const SETTING_KEY = 'cursor_secret';

/**
 * The cursor key ring: from CURSOR_SECRET when set; otherwise a secret generated on first use and
 * stored in the database, so cursors survive restarts and are shared by every instance.
 * Loaded lazily (first list request), after migrations have run.
 */
@Injectable()
export class CursorKeys {
  private ring?: Promise<CursorKeyRing>;

  constructor(
    @Inject(PAGINATION_OPTIONS) private readonly options: PaginationModuleOptions,
    @InjectDataSource() private readonly ds: DataSource,
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
    if (existing) return CursorKeyRing.fromSecrets([existing.value]);
    // Two processes may race here: both insert-or-ignore, then both read the winner.
    await repo.createQueryBuilder().insert().values({ key: SETTING_KEY, value: randomBytes(32).toString('base64url') }).orIgnore().execute();
    const stored = await repo.findOneByOrFail({ key: SETTING_KEY });
    return CursorKeyRing.fromSecrets([stored.value]);
  }
}
