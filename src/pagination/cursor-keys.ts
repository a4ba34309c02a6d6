import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { SecretPlace } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { SettingsStore } from '../settings/settings.store';
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
    private readonly settings: SettingsStore,
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
    const existing = await this.settings.get(SETTING_KEY);
    if (existing !== null) return CursorKeyRing.fromSecrets([this.secrets.decrypt(existing, PLACE)]);
    // Two processes may race here: both insert-or-ignore, then both read the winner.
    await this.settings.insertIfAbsent(SETTING_KEY, this.secrets.encrypt(randomBytes(32).toString('base64url'), PLACE));
    const stored = await this.settings.get(SETTING_KEY);
    if (stored === null) throw new Error(`the ${SETTING_KEY} setting was not stored`);
    return CursorKeyRing.fromSecrets([this.secrets.decrypt(stored, PLACE)]);
  }

  /**
   * Re-encrypts the stored cursor secret under the newest key (plaintext from before encryption
   * included). Compare-and-set, so it is safe beside running processes. True when it changed.
   */
  async reencrypt(): Promise<boolean> {
    // A host database without the optional `settings` feature keeps no cursor secret to rewrite.
    if (!(await this.settings.exists())) return false;
    const existing = await this.settings.get(SETTING_KEY);
    if (existing === null || this.secrets.ring.isCurrent(existing)) return false;
    return this.settings.replace(SETTING_KEY, existing, this.secrets.encrypt(this.secrets.decrypt(existing, PLACE), PLACE));
  }
}
