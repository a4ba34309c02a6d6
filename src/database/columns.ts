import { Column, ColumnOptions, ValueTransformer } from 'typeorm';

/**
 * Timestamps are stored as epoch milliseconds in a BIGINT on both drivers: the same precision on
 * SQLite and PostgreSQL, no session-time-zone surprises, and comparisons use the injected clock
 * rather than the database's `now()`. Entities still see `Date`.
 */
export const epochMs: ValueTransformer = {
  to: (value: Date | null | undefined) => (value == null ? value : value.getTime()),
  // pg returns BIGINT as a string; better-sqlite3 as a number.
  from: (value: string | number | null) => (value == null ? null : new Date(Number(value))),
};

export function TimestampColumn(options: Omit<ColumnOptions, 'type' | 'transformer'> = {}): PropertyDecorator {
  return Column({ ...options, type: 'bigint', transformer: epochMs });
}

/** BIGINT counters that must come back as numbers from pg too. */
export const bigintNumber: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value == null ? null : Number(value)),
};
