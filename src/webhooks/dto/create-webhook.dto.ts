import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { SUBREDDIT_INPUT } from '../../common/reddit-names';
import { WEBHOOK_EVENTS, WebhookEvent } from '../webhook.entity';

// Kept importable from here for code that predates src/common/reddit-names.ts.
export { SUBREDDIT_INPUT, normaliseSubreddit } from '../../common/reddit-names';

export class CreateWebhookDto {
  @IsDefined({ message: 'url is required' })
  @IsString({ message: 'url must be a string' })
  @MaxLength(2048, { message: 'url must be at most 2048 characters' })
  url: string;

  @IsDefined({ message: 'event is required' })
  @IsIn(WEBHOOK_EVENTS as readonly string[], { message: `event must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  event: WebhookEvent;

  @IsDefined({ message: 'subreddit is required' })
  @IsString({ message: 'subreddit must be a string' })
  @Matches(SUBREDDIT_INPUT, { message: 'subreddit must be 3 to 21 letters, digits or underscores, not starting with an underscore (an r/ prefix is allowed)' })
  subreddit: string;

  @IsOptional()
  @IsBoolean({ message: 'allow_nonstandard_port must be a boolean' })
  allow_nonstandard_port?: boolean;
}
