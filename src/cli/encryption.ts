import { Command } from 'commander';
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
        const cursorSecret = await ctx.get(CursorKeys).reencrypt();
        return { key_id: ctx.get(SecretBox).ring.primaryId, webhooks_scanned: webhooks.scanned, webhooks_reencrypted: webhooks.reencrypted, webhooks_changed_meanwhile: webhooks.skipped, cursor_secret_reencrypted: cursorSecret };
      });
      if (opts.json) console.log(JSON.stringify(res));
      else console.log(`re-encrypted ${res.webhooks_reencrypted} of ${res.webhooks_scanned} webhooks${res.cursor_secret_reencrypted ? ' and the cursor secret' : ''} under key ${res.key_id}`);
      if (res.webhooks_changed_meanwhile > 0) {
        console.error(`${res.webhooks_changed_meanwhile} webhooks kept changing while this ran; run the command again`);
        process.exitCode = 1;
      }
    });
}
