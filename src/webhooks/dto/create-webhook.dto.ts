import { ApiProperty, ApiPropertyOptional, ApiSchema } from '../../openapi/swagger';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { SUBREDDIT_INPUT } from '../../common/reddit-names';
import { EVENT_KINDS, EventKind } from '../../events/catalogue';

/** A validated create body. Controllers type the parameter with this interface, not the class: see WebhooksController. */
export interface CreateWebhookInput {
  url: string;
  event: EventKind;
  subreddit: string;
  allow_nonstandard_port?: boolean;
}

@ApiSchema({ name: 'CreateWebhook', description: 'Unknown fields are refused (`400 VALIDATION_ERROR` naming the field).' })
export class CreateWebhookDto implements CreateWebhookInput {
  @ApiProperty({
    format: 'uri',
    maxLength: 2048,
    description: 'Absolute https URL without userinfo, to a public address (SSRF policy); port 443 unless allow_nonstandard_port.',
    example: 'https://example.com/hooks/trendhooks',
  })
  @IsDefined({ message: 'url is required' })
  @IsString({ message: 'url must be a string' })
  @MaxLength(2048, { message: 'url must be at most 2048 characters' })
  url: string;

  @ApiProperty({ enum: EVENT_KINDS, enumName: 'WebhookEvent' })
  @IsDefined({ message: 'event is required' })
  @IsIn(EVENT_KINDS, { message: `event must be one of ${EVENT_KINDS.join(', ')}` })
  event: EventKind;

  @ApiProperty({
    pattern: SUBREDDIT_INPUT.source,
    description: "Reddit's name rule; an r/ prefix is stripped and the name stored in lower case.",
    example: 'typescript',
  })
  @IsDefined({ message: 'subreddit is required' })
  @IsString({ message: 'subreddit must be a string' })
  @Matches(SUBREDDIT_INPUT, { message: 'subreddit must be 3 to 21 letters, digits or underscores, not starting with an underscore (an r/ prefix is allowed)' })
  subreddit: string;

  @ApiPropertyOptional({ default: false, description: 'Allow a port other than 443.' })
  @IsOptional()
  @IsBoolean({ message: 'allow_nonstandard_port must be a boolean' })
  allow_nonstandard_port?: boolean;
}
