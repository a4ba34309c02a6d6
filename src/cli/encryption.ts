import { Command } from 'commander';
import { SecretDecryptionError } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { CursorKeys } from '../pagination/cursor-keys';
import { WebhooksService } from '../webhooks/webhooks.service';
import { ConfigSource, withAppContext } from './support';

/** `trendhooks encryption reencrypt`: the step of a key rotation that rewrites stored secrets. */
export function addEncryptionCommands(program: Command, config: ConfigSource): void {
  const encryption = program.command('encryption').description('encryption at rest of stored secrets (README "Secrets at rest")');
  encryption
    .command('reencrypt')
    .description(
      're-encrypt every stored secret (webhook signing secrets, the generated cursor secret) under the first key of ENCRYPTION_KEYS or the key file, ' +
        'and encrypt any still in clear; row by row, safe while trendhooks runs and safe to interrupt and repeat',
    )
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const res = await withAppContext(config(), 'api', async (ctx) => {
        const webhooks = await ctx.get(WebhooksService).reencryptSecrets();
        let cursorSecret = false;
        let cursorSecretUnreadable = false;
        try {
          cursorSecret = await ctx.get(CursorKeys).reencrypt();
        } catch (err) {
          if (!(err instanceof SecretDecryptionError)) throw err;
          cursorSecretUnreadable = true;
        }
        return {
          key_id: ctx.get(SecretBox).ring.primaryId,
          webhooks_scanned: webhooks.scanned,
          webhooks_reencrypted: webhooks.reencrypted,
          webhooks_changed_meanwhile: webhooks.skipped,
          cursor_secret_reencrypted: cursorSecret,
          // Left as they are: their rows are damaged or altered, or were written under a key the ring lacks.
          unreadable: [...webhooks.unreadable, ...(cursorSecretUnreadable ? [{ setting: 'cursor_secret', column: 'value' }] : [])],
        };
      });
      if (opts.json) console.log(JSON.stringify(res));
      else console.log(`re-encrypted ${res.webhooks_reencrypted} of ${res.webhooks_scanned} webhooks${res.cursor_secret_reencrypted ? ' and the cursor secret' : ''} under key ${res.key_id}`);
      if (res.unreadable.length > 0) {
        const rows = res.unreadable.map((u) => ('webhook_id' in u ? `webhook ${u.webhook_id} ${u.column}` : `setting ${u.setting} ${u.column}`));
        console.error(`${rows.length} stored secret${rows.length === 1 ? '' : 's'} did not decrypt and ${rows.length === 1 ? 'was' : 'were'} left as ${rows.length === 1 ? 'it was' : 'they were'} (damaged, altered, or under a key the ring lacks): ${rows.join(', ')}`);
        console.error('their webhooks fail as secret_unreadable until the customer rotates the secret (POST /v1/webhooks/{id}/rotate-secret) or the value is restored');
        process.exitCode = 1;
      }
      if (res.webhooks_changed_meanwhile > 0) {
        console.error(`${res.webhooks_changed_meanwhile} webhooks kept changing while this ran; run the command again`);
        process.exitCode = 1;
      }
    });
}
