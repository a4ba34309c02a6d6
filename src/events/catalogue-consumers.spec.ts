import type { OpenAPIObject } from '@nestjs/swagger';
import { WEBHOOK_DISABLED_TYPE } from './webhook-disabled';
import { BodyValidationPipe } from '../common/validation';
import { deliveryWebhooks } from '../openapi/document';
import { applyOpenApiMetadata } from '../openapi/swagger';
import { eventKey } from '../trends/detectors/event-key';
import { toTrendEvent, trendEventId } from '../trends/trend-event';
import { CreateWebhookDto } from '../webhooks/dto/create-webhook.dto';
import { WebhookResource } from '../webhooks/dto/webhook.resource';
import { Detection, EVENT_CATALOGUE, EVENT_KINDS, EventKind } from './catalogue';

/** Where @nestjs/swagger keeps an @ApiProperty's options (its DECORATORS.API_MODEL_PROPERTIES). */
const SWAGGER_PROPERTY = 'swagger/apiModelProperties';

/**
 * Adding a kind is its catalogue entry and its detector: everything else that handles kinds must
 * pick every entry up by itself. Each test iterates the catalogue, never a list of its own.
 */
describe('what derives from the event catalogue', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each([...EVENT_KINDS])('the trend pipeline turns a %s detection into its event through the catalogue entry', (kind: EventKind) => {
    const def = EVENT_CATALOGUE[kind];
    const { event_id: _e, webhook_id: _w, subreddit: _s, ...data } = def.example.data;
    const identity = { windowStartMs: 1_700_000_000_000, discriminator: 'x', createdAtMs: 1_700_000_300_000 };
    jest.spyOn(def, 'toData').mockReturnValue(data as never);
    jest.spyOn(def, 'identity').mockReturnValue(identity);
    const detection = { kind } as Detection;

    const ev = toTrendEvent('Demo', detection);

    expect(def.toData).toHaveBeenCalledWith(detection);
    expect(ev).toEqual({
      id: trendEventId(eventKey(kind, 'Demo', identity.windowStartMs, identity.discriminator)),
      type: kind,
      createdAt: new Date(identity.createdAtMs),
      data,
    });
  });

  it("the OpenAPI document's webhooks section has one delivery per kind, with its schema and example (a test event is its webhook's kind), then the operators' webhook.disabled", () => {
    const doc = { components: { schemas: {} } } as unknown as OpenAPIObject;
    const webhooks = deliveryWebhooks(doc) as Record<string, { post: { summary: string; description: string; requestBody: { content: { 'application/json': { example: unknown } } } } }>;
    expect(Object.keys(webhooks)).toEqual([...EVENT_KINDS, WEBHOOK_DISABLED_TYPE]);
    for (const kind of EVENT_KINDS) {
      expect(webhooks[kind].post.summary).toBe(`${kind}: ${EVENT_CATALOGUE[kind].summary}`);
      expect(webhooks[kind].post.description).toContain('`data.test: true`');
      expect(webhooks[kind].post.requestBody.content['application/json'].example).toEqual(EVENT_CATALOGUE[kind].example);
    }
    expect(Object.keys(doc.components!.schemas!)).toHaveLength(EVENT_KINDS.length + 1);
  });

  describe('webhook validation', () => {
    const pipe = new BodyValidationPipe(CreateWebhookDto);
    const body = (event: unknown) => ({ url: 'https://hooks.example.com/h', event, subreddit: 'typescript' });

    it.each([...EVENT_KINDS])('accepts a subscription to %s', async (kind) => {
      await expect(pipe.transform(body(kind), { type: 'body' })).resolves.toMatchObject({ event: kind });
    });

    it('refuses any other event, naming every kind', async () => {
      await expect(pipe.transform(body('trends.other'), { type: 'body' })).rejects.toThrow(`event must be one of ${EVENT_KINDS.join(', ')}`);
    });

    it.each([
      ['CreateWebhook', CreateWebhookDto],
      ['Webhook', WebhookResource],
    ])('documents the kinds as the %s enum', (_name, dto) => {
      applyOpenApiMetadata(); // the decorators wait for @nestjs/swagger (src/openapi/swagger.ts)
      const meta = Reflect.getMetadata(SWAGGER_PROPERTY, dto.prototype, 'event') as { enum: unknown };
      expect(meta.enum).toEqual([...EVENT_KINDS]);
    });
  });
});
