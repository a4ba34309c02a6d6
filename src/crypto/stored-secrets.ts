/** One stored value of a secret column: its row's id and the value as stored (`enc:v…`, or clear). */
export interface StoredSecretValue {
  id: string;
  stored: string;
}

/**
 * A table that holds secrets encrypted with SecretBox, as its owning store shows it to the key
 * ring's startup check: crypto never names another module's table. The owner implements this and
 * hands it to `SecretBox.holdSecretsIn` from its constructor, before any module starts, so the
 * check sees every table of the application. LIKE patterns escape `%`, `_` and `\` with a backslash.
 */
export abstract class StoredSecrets {
  /** The row part of each value's place, `<kind>:<row id>` (`webhook`): what its ciphertext is bound to. */
  abstract readonly kind: string;

  /** The columns holding secrets, as the places name them. */
  abstract readonly columns: readonly string[];

  /** Whether the table is there (a host may leave an optional feature out). */
  abstract present(): Promise<boolean>;

  /** Up to `limit` values of `column` matching `like` and none of `notLike`, in no particular order. */
  abstract sample(column: string, like: string, notLike: readonly string[], limit: number): Promise<StoredSecretValue[]>;

  /** How many values of the table's current secrets do not match `like` (the encrypted prefix): secrets still in clear. */
  abstract countCurrentNotLike(like: string): Promise<number>;
}
