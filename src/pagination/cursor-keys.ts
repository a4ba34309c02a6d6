import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { SecretPlace } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { SettingsStore } from '../settings/settings.store';
import { checkCursorSecrets, CursorKeyRing } from './cursor-codec';
import { PAGINATION_OPTIONS, PaginationModuleOptions } from './pagination.options';

const SETTING_KEY = 'cursor_secret';
/** Where the generated secret is stored, bound into its ciphertext. */
const PLACE: SecretPlace = { row: `setting:${SETTING_KEY}`, column: 'value' };

/**
 * The cursor key ring: from CURSOR_SECRET when set; otherwise a secret generated on first use and
 * stored in the database (encrypted by SecretBox), so cursors survive restarts and are shared by every instance.
 * Given secrets are checked at start (PaginationModule's forRoot / forRootAsync); the stored one is
 * loaded lazily (first list request), after migrations have run.
 */
@Injectable()
export class CursorKeys {
  private ring?: Promise<CursorKeyRing>;
  /** The ring of the secrets the host gave, checked when the module starts: a bad one stops the start, not every list request later. */
  private readonly given?: CursorKeyRing;

  constructor(
    @Inject(PAGINATION_OPTIONS) options: PaginationModuleOptions,
    private readonly settings: SettingsStore,
    private readonly secrets: SecretBox,
  ) {
    if (options.secrets?.length) this.given = CursorKeyRing.fromSecrets(checkCursorSecrets(options.secrets));
  }

  get(): Promise<CursorKeyRing> {
    if (!this.ring) {
      this.ring = this.load();
      this.ring.catch(() => (this.ring = undefined)); // retry on the next request after a database hiccup
    }
    return this.ring;
  }

  private async load(): Promise<CursorKeyRing> {
    if (this.given) return this.given;
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
