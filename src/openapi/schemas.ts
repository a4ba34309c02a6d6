import { Type } from '@nestjs/common';
import { ApiProperty, ApiSchema } from './swagger';
import { ERROR_STATUS, ErrorCode } from '../common/errors';

/**
 * OpenAPI-only classes for the envelopes of spec 2.2 / 2.4. Nothing is instantiated from them:
 * envelope() (src/common/envelope.ts) and ApiExceptionFilter build the bodies; these describe them.
 */

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

@ApiSchema({ name: 'PageWithPrev', description: 'Keyset page of a list that can be walked both ways.' })
export class PageWithPrevSchema {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 100, description: 'The page size used.' })
  limit: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'Cursor of the next (older) page; null on the last page.' })
  next_cursor: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Cursor of the previous (newer) page; null on the first page.' })
  prev_cursor: string | null;
}

@ApiSchema({ name: 'PageNextOnly', description: 'Keyset page of a list that is walked forward only (spec 2.3).' })
export class PageNextOnlySchema {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 100, description: 'The page size used.' })
  limit: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'Cursor of the next (older) page; null on the last page.' })
  next_cursor: string | null;
}

@ApiSchema({ name: 'Meta', description: 'Meta of a single-resource answer.' })
export class MetaSchema {
  @ApiProperty({ description: 'Equal to the X-Request-Id response header.', example: 'req_4f1c2a9b8e7d4c3b9a1f0e2d3c4b5a69' })
  request_id: string;

  @ApiProperty({ type: 'null', description: 'Always null outside lists.' })
  page: null;
}

@ApiSchema({ name: 'MetaWithPrev', description: 'Meta of a list page with next and prev cursors.' })
export class MetaWithPrevSchema {
  @ApiProperty({ description: 'Equal to the X-Request-Id response header.' })
  request_id: string;

  @ApiProperty({ type: PageWithPrevSchema })
  page: PageWithPrevSchema;
}

@ApiSchema({ name: 'MetaNextOnly', description: 'Meta of a list page with a next cursor only.' })
export class MetaNextOnlySchema {
  @ApiProperty({ description: 'Equal to the X-Request-Id response header.' })
  request_id: string;

  @ApiProperty({ type: PageNextOnlySchema })
  page: PageNextOnlySchema;
}

@ApiSchema({ name: 'Error' })
export class ErrorBodySchema {
  @ApiProperty({ enum: ERROR_CODES, enumName: 'ErrorCode', description: 'Stable, machine-readable; the HTTP status follows from it.' })
  code: ErrorCode;

  @ApiProperty({ description: 'For humans; names the offending field or value where there is one. Never internals.' })
  message: string;

  @ApiProperty({ description: 'Equal to the X-Request-Id response header; quote it to support.' })
  request_id: string;
}

@ApiSchema({ name: 'ErrorEnvelope', description: 'Every error answer (spec 2.4).' })
export class ErrorEnvelopeSchema {
  @ApiProperty({ type: ErrorBodySchema })
  error: ErrorBodySchema;
}

export type EnvelopeKind = 'one' | 'list-with-prev' | 'list-next-only';

const envelopes = new Map<string, Type<unknown>>();

/**
 * A named envelope class around `model` (e.g. `WebhookEnvelope`, `WebhookListEnvelope`), so each
 * answer is one named component that client generators can use.
 */
export function envelopeOf(model: Type<unknown>, kind: EnvelopeKind, name: string): Type<unknown> {
  const key = `${name}:${kind}`;
  const cached = envelopes.get(key);
  if (cached) return cached;
  const list = kind !== 'one';
  const meta = kind === 'one' ? MetaSchema : kind === 'list-with-prev' ? MetaWithPrevSchema : MetaNextOnlySchema;
  class Envelope {
    data: unknown;
    meta: unknown;
  }
  ApiProperty({ type: model, isArray: list })(Envelope.prototype, 'data');
  ApiProperty({ type: meta })(Envelope.prototype, 'meta');
  const schemaName = `${name}${list ? 'List' : ''}Envelope`;
  Object.defineProperty(Envelope, 'name', { value: schemaName });
  ApiSchema({ name: schemaName })(Envelope);
  envelopes.set(key, Envelope);
  return Envelope;
}
