import { ApiPropertyOptional, ApiSchema } from '../../openapi/swagger';
import { IsBoolean, IsString, MaxLength, ValidateIf } from 'class-validator';

/** A validated PATCH body. Controllers type the parameter with this interface, not the class: see WebhooksController. */
export interface UpdateWebhookInput {
  url?: string;
  allow_nonstandard_port?: boolean;
  disabled?: boolean;
}

/** The fields a PATCH may set: at least one of them (else `400 VALIDATION_ERROR`). */
export const UPDATE_WEBHOOK_FIELDS = ['url', 'allow_nonstandard_port', 'disabled'] as const;

// ValidateIf, not IsOptional: a field given as null is refused (IsOptional would let null through as "not given").
@ApiSchema({ name: 'UpdateWebhook', description: 'At least one field; unknown fields are refused (`400 VALIDATION_ERROR` naming the field). Event and subreddit cannot change: create another webhook.' })
export class UpdateWebhookDto implements UpdateWebhookInput {
  @ApiPropertyOptional({
    format: 'uri',
    maxLength: 2048,
    description: 'A new destination: absolute https URL without userinfo, checked against the SSRF policy as at create.',
    example: 'https://example.com/hooks/trendhooks',
  })
  @ValidateIf((o: UpdateWebhookDto) => o.url !== undefined)
  @IsString({ message: 'url must be a string' })
  @MaxLength(2048, { message: 'url must be at most 2048 characters' })
  url?: string;

  @ApiPropertyOptional({ description: 'Allow a port other than 443; the URL is checked again with the new value.' })
  @ValidateIf((o: UpdateWebhookDto) => o.allow_nonstandard_port !== undefined)
  @IsBoolean({ message: 'allow_nonstandard_port must be a boolean' })
  allow_nonstandard_port?: boolean;

  @ApiPropertyOptional({
    description:
      '`true` pauses the webhook (`disabled_reason` `manual`): no new deliveries, its pending ones are `held` (not sent), its events are still recorded. ' +
      '`false` resumes it, whatever disabled it, restarts its failure clock, and makes held deliveries `pending` again (those held over 14 days end `cancelled`).',
  })
  @ValidateIf((o: UpdateWebhookDto) => o.disabled !== undefined)
  @IsBoolean({ message: 'disabled must be a boolean' })
  disabled?: boolean;
}
