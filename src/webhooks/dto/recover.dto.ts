import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '../../openapi/swagger';
import type { RecoverInput } from '../recover-window';

@ApiSchema({ name: 'RecoverRequest', description: 'Unknown fields are refused (`400 VALIDATION_ERROR` naming the field).' })
export class RecoverDto implements RecoverInput {
  @ApiProperty({
    format: 'date-time',
    description: 'Events created at or after this instant (ISO 8601 with a zone), not in the future.',
    example: '2026-11-27T07:00:00Z',
  })
  @IsDefined({ message: 'since is required' })
  @IsString({ message: 'since must be a string' })
  since: string;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', nullable: true, description: 'Events created before this instant (excluded); now when absent. At most 14 days after `since`.' })
  @IsOptional()
  @IsString({ message: 'until must be a string' })
  until?: string | null;

  @ApiPropertyOptional({ type: 'boolean', nullable: true, default: false, description: 'Only count what would be queued.' })
  @IsOptional()
  @IsBoolean({ message: 'dry_run must be a boolean' })
  dry_run?: boolean | null;
}

/** The answer of `POST /v1/webhooks/{webhook_id}/recover`. */
@ApiSchema({ name: 'Recovery', description: 'What a recover queued (or, dry run, would queue).' })
export class RecoveryResource {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Deliveries queued by this call: failed or cancelled ones queued again, and new ones for events that had none. Deliveries already pending, held or in flight are not counted (a second recover of the same range queues 0).',
  })
  queued: number;

  @ApiProperty({ format: 'date-time' })
  since: string;

  @ApiProperty({ format: 'date-time' })
  until: string;

  @ApiProperty()
  dry_run: boolean;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Null when the whole range was covered. Otherwise this call stopped after 10,000 events: recover again with this as `since` (and the same `until`) to go on.',
  })
  next_since: string | null;
}
