import { Body, Controller, HttpCode, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiProperty, ApiPropertyOptional, ApiSchema, ApiTags } from '../openapi/swagger';
import { TrendhooksPrincipal } from '../auth/principal';
import { PrincipalGuard } from '../auth/principal.guard';
import { BusinessPlus, CurrentPrincipal } from '../auth/plan.decorator';
import { AppError } from '../common/errors';
import { BodyErrorGuard, envelope, RequestId } from '../common/envelope';
import { ApiExceptionFilter } from '../common/exception.filter';
import { ApiEnvelopeResponse, ApiErrorResponses, ApiV1Controller } from '../openapi/decorators';
import { WebhooksService } from '../webhooks/webhooks.service';
import { PortalSessionsService } from './portal-sessions.service';

@ApiSchema({ name: 'CreatePortalSession', description: 'Optional; an empty body (or none) gives a link to all of the caller\'s webhooks.' })
export class CreatePortalSessionDto {
  @ApiPropertyOptional({ description: 'Scope the link to this one webhook of the caller\'s.', example: '01JGXQ0Z6N3V4W5X6Y7Z8A9B0C' })
  webhook_id?: string;
}

@ApiSchema({ name: 'PortalLink' })
export class PortalLinkResource {
  @ApiProperty({ format: 'uri', description: 'Open once, within `expires_at`: `<base>/portal#token=…` (the token rides in the fragment, never sent to a server log).' })
  url: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

/** The body, checked by hand: at most `webhook_id`, a string. */
function webhookIdOf(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('VALIDATION_ERROR', 'the body must be a JSON object');
  const unknown = Object.keys(body).filter((k) => k !== 'webhook_id');
  if (unknown.length > 0) throw new AppError('VALIDATION_ERROR', `unknown field ${unknown[0].slice(0, 40)}`);
  const id = (body as { webhook_id?: unknown }).webhook_id;
  if (id === undefined) return null;
  if (typeof id !== 'string') throw new AppError('VALIDATION_ERROR', 'webhook_id must be a string');
  return id;
}

@Controller('v1/portal/sessions')
@BusinessPlus()
@UseGuards(PrincipalGuard, BodyErrorGuard)
@UseFilters(ApiExceptionFilter)
@ApiTags('Portal')
@ApiV1Controller({ businessPlus: true })
export class PortalSessionsController {
  constructor(
    private readonly sessions: PortalSessionsService,
    private readonly webhooks: WebhooksService,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createPortalSession',
    summary: 'Mint a portal link',
    description: "A single-use link (default 1 h) to the customer portal for the caller's webhooks, or for one of them (`webhook_id`).",
  })
  @ApiBody({ type: CreatePortalSessionDto, required: false })
  @ApiEnvelopeResponse(201, PortalLinkResource, 'PortalLink', 'The link.')
  @ApiErrorResponses({
    400: '`VALIDATION_ERROR` (an unknown field, `webhook_id` not a ULID) or `INVALID_JSON`.',
    403: '`PLAN_REQUIRED`, or `FORBIDDEN`: the caller is itself a portal session.',
    404: "`NOT_FOUND`: no such webhook, or another customer's.",
  })
  async create(@CurrentPrincipal() caller: TrendhooksPrincipal, @Body() body: unknown, @Req() req: { protocol?: string; headers: Record<string, string | undefined> }, @RequestId() requestId: string) {
    // A session minting links would outlive its own expiry.
    if (caller.portalSessionId !== undefined || caller.webhookId !== undefined) throw new AppError('FORBIDDEN', 'a portal session cannot mint portal links');
    const id = webhookIdOf(body);
    const webhook = id === null ? null : await this.webhooks.get(caller, id);
    const base = this.sessions.options.baseUrl ?? `${req.protocol ?? 'http'}://${req.headers.host ?? 'localhost'}`;
    return envelope(requestId, await this.sessions.mint(caller, webhook?.id ?? null, base));
  }
}
