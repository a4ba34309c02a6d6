import * as fs from 'node:fs';
import * as path from 'node:path';
import { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The OpenAPI 3.1 document, as @nestjs/swagger's OpenAPIObject is: named apart in the published
 * types, which must compile where that optional package is not installed.
 */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: object;
  components?: object;
  webhooks?: object;
}
import { BEARER, HEADER } from './decorators';
import { applyOpenApiMetadata, loadSwagger } from './swagger';
import { EVENT_CATALOGUE, EVENT_KINDS, eventBodySchema } from '../events/catalogue';
import { WEBHOOK_DISABLED_TYPE, webhookDisabledBodySchema } from '../events/webhook-disabled';

const integer = (description: string, required = true) => ({ description, required, schema: { type: 'integer', minimum: 0 } });

/** components.headers, referenced from every response (decorators.ts). */
const HEADERS = {
  [HEADER.requestId]: {
    description: 'The request id, equal to `meta.request_id` / `error.request_id`. A caller-sent `X-Request-Id` of 8–128 plain characters is echoed.',
    required: true,
    schema: { type: 'string' },
  },
  [HEADER.limit]: integer("Requests per minute allowed to this API key (the plan's figure)."),
  [HEADER.remaining]: integer('Requests left in the current window.'),
  [HEADER.reset]: integer('Seconds until the window resets.'),
  [HEADER.rateLimit]: {
    description: 'The same state as an IETF structured field (draft-ietf-httpapi-ratelimit-headers): `"default";r=<remaining>;t=<seconds to reset>`.',
    required: true,
    schema: { type: 'string', example: '"default";r=299;t=42' },
  },
  [HEADER.rateLimitPolicy]: {
    description: 'The policy as an IETF structured field: `"default";q=<requests per window>;w=60`.',
    required: true,
    schema: { type: 'string', example: '"default";q=300;w=60' },
  },
  [HEADER.retryAfter]: integer('Seconds to wait before retrying.'),
  [HEADER.wwwAuthenticate]: { description: '`Bearer realm="trendhooks"`.', required: true, schema: { type: 'string' } },
};

const SECURITY_SCHEMES = {
  [BEARER]: { type: 'http' as const, scheme: 'bearer', description: 'An API key (`th_live_…`), issued with `trendhooks keys create`.' },
};

/**
 * What trendhooks' operations refer to: the `bearer` scheme and the shared response headers. A host
 * app documenting the modules with its own DocumentBuilder merges these into its components.
 * Reading them (the spread that merges them) also applies trendhooks' OpenAPI decorators, which
 * wait for @nestjs/swagger (src/openapi/swagger.ts): the host's SwaggerModule.createDocument then
 * finds trendhooks' routes documented, whenever the host loaded @nestjs/swagger.
 */
export const TRENDHOOKS_OPENAPI_COMPONENTS = {
  get securitySchemes(): typeof SECURITY_SCHEMES {
    applyOpenApiMetadata();
    return SECURITY_SCHEMES;
  },
  get headers(): typeof HEADERS {
    applyOpenApiMetadata();
    return HEADERS;
  },
};

/** What the OpenAPI document needs, named in the one-line error when @nestjs/swagger is not installed. */
export const OPENAPI_DOCUMENT_REASON = 'the OpenAPI document (GET /openapi.json, GET /docs, trendhooks openapi) was asked for';

function packageVersion(): string {
  // src/openapi and dist/openapi are both two levels below the package root.
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The OpenAPI 3.1 document of the app's routes, generated from the controllers' decorators. Works
 * on an app that was created but not initialised (also in `preview` mode: nothing is connected).
 * Loads @nestjs/swagger; without it, a MissingPackageError names the package to install.
 */
export function buildOpenApiDocument(app: INestApplication): OpenApiDocument {
  const { DocumentBuilder, SwaggerModule } = loadSwagger(OPENAPI_DOCUMENT_REASON);
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('trendhooks')
    .setDescription(
      'Trend events from subreddits delivered as signed webhooks (Standard Webhooks v1), and the JSON REST API to manage them.\n\n' +
        'Every answer is JSON in the envelope `{"data": …, "meta": {"request_id", "page"}}`; every error is `{"error": {"code", "message", "request_id"}}`. ' +
        'Every response carries `X-Request-Id`, and every `/v1` response `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` with the same state in the IETF `RateLimit` and `RateLimit-Policy` fields.',
    )
    .setVersion(packageVersion())
    // Relative: "Try it out" on /docs calls the server that served it, whatever its host and port.
    .addServer('/', 'the server this document was read from')
    .addTag('Webhooks', 'Webhook subscriptions (Business plan and above).')
    .addTag('Deliveries', "A webhook's delivery log, manual retries, test events and recovery after an outage (Business plan and above).")
    .addTag('Events', 'The events of your subscriptions, to pull while a receiver is down (Business plan and above).')
    .addTag('Posts', 'Stored Reddit posts (every plan).')
    .addTag('Subreddits', 'Whether trendhooks can read a subreddit from Reddit (Business plan and above).')
    .addTag('Health', 'Liveness and readiness; no authentication, no rate limit.')
    .addTag('Webhook deliveries', "What trendhooks POSTs to your endpoint: one body schema per event kind (a test event is a body of its webhook's kind, with `data.test: true`), signed with Standard Webhooks headers.")
    .build();
  config.components = { ...config.components, ...TRENDHOOKS_OPENAPI_COMPONENTS };
  const doc = SwaggerModule.createDocument(app, config, {
    // Stable operation ids come from @ApiOperation; this only names any route that forgot one.
    operationIdFactory: (controller: string, method: string) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  deliveriesLast(doc);
  // The create body refuses unknown fields; say so (ApiSchema has no option for it).
  const create = doc.components?.schemas?.CreateWebhook as Json | undefined;
  if (create) create.additionalProperties = false;
  const webhooks = deliveryWebhooks(doc); // adds the body schemas to doc's components
  return { ...toOpenApi31(doc), webhooks } as OpenAPIObject;
}

/**
 * Keeps the published order: the delivery routes (tag `Deliveries`) and the schemas only they use
 * come after the others, as when DeliveryModule registered them. WebhooksModule registers them now
 * (they are webhook sub-resources), which would otherwise move them before the posts routes.
 */
function deliveriesLast(doc: OpenAPIObject): void {
  const isDeliveries = (item: unknown) => Object.values(item as Record<string, { tags?: string[] }>).some((op) => op?.tags?.includes('Deliveries'));
  const schemas = doc.components?.schemas ?? {};
  const reach = (from: unknown): Set<string> => {
    const seen = new Set<string>();
    const stack = [JSON.stringify(from)];
    while (stack.length > 0) {
      for (const m of stack.pop()!.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
        if (seen.has(m[1])) continue;
        seen.add(m[1]);
        stack.push(JSON.stringify(schemas[m[1]] ?? null));
      }
    }
    return seen;
  };
  const entries = Object.entries(doc.paths);
  const [others, deliveries] = [entries.filter(([, v]) => !isDeliveries(v)), entries.filter(([, v]) => isDeliveries(v))];
  doc.paths = Object.fromEntries([...others, ...deliveries]);
  const usedElsewhere = reach(Object.fromEntries(others));
  const onlyDeliveries = [...reach(Object.fromEntries(deliveries))].filter((n) => !usedElsewhere.has(n));
  if (doc.components?.schemas) {
    const all = Object.entries(doc.components.schemas);
    doc.components.schemas = Object.fromEntries([...all.filter(([n]) => !onlyDeliveries.includes(n)), ...all.filter(([n]) => onlyDeliveries.includes(n))]);
  }
}

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', description: 'The delivery id (`msg_…`), identical on every retry: deduplicate on it.', example: 'msg_3dkr5g0xmp7h7b7ctx9a09wxsz' },
  { name: 'webhook-timestamp', description: 'Unix seconds when this attempt was signed; refuse one more than 5 minutes from now.', example: '1772543100' },
  {
    name: 'webhook-signature',
    description: 'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64-decoded part of the webhook secret after `whsec_`; two during a rotation. Verify with the `standardwebhooks` libraries.',
    example: 'v1,Hgkny2crtu/RGHLD+rAbTl0jAgctqnScw6kUOHb2I7c=',
  },
];

/** One body trendhooks POSTs to receivers, as the `webhooks` section documents it. */
interface DeliveredBody {
  type: string;
  /** Its components.schemas name. */
  name: string;
  operationId: string;
  summary: string;
  description: string;
  schema: Record<string, unknown>;
}

function deliveredBodies(): DeliveredBody[] {
  const trends = EVENT_KINDS.map((kind) => ({
    type: kind,
    name: `${kind.replace(/^trends\./, '').replace(/^./, (c) => c.toUpperCase())}Event`,
    operationId: `webhook_${kind.replace('.', '_')}`,
    summary: `${kind}: ${EVENT_CATALOGUE[kind].summary}`,
    description:
      `POSTed to every webhook subscribed to \`${kind}\` for the subreddit. Answer 2xx to acknowledge; 408, 425, 429 and 5xx (and no answer within 10 s) are retried on the schedule, other 4xx and 3xx are final. ` +
      "A test event (`POST /v1/webhooks/{webhook_id}/test`) is this body with the example's figures and `data.test: true`, sent to that webhook only.",
    schema: eventBodySchema(kind),
  }));
  const disabled = {
    type: WEBHOOK_DISABLED_TYPE,
    name: 'WebhookDisabledEvent',
    operationId: 'webhook_disabled_event',
    summary: `${WEBHOOK_DISABLED_TYPE}: a webhook was disabled automatically (operators only)`,
    description:
      'POSTed to `OPERATIONS_WEBHOOK_URL` (signed with `OPERATIONS_WEBHOOK_SECRET`), never to a customer, when trendhooks disables a webhook on its own: its receiver answered `410 Gone`, ' +
      'or every attempt failed for `WEBHOOK_DISABLE_AFTER`. A few attempts, best effort; host apps get `DeliveryModule.forRoot({ onWebhookDisabled })` with `data` instead.',
    schema: webhookDisabledBodySchema(),
  };
  return [...trends, disabled];
}

/**
 * The receiver's side of the contract (OpenAPI 3.1 `webhooks`): one entry per event kind, its body
 * schema and example from the event catalogue (a test event is a body of its webhook's kind); each with the Standard
 * Webhooks signature headers. Every body trendhooks delivers is one of these.
 */
export function deliveryWebhooks(doc: OpenApiDocument): Json {
  const schemas = ((doc as OpenAPIObject).components ??= {}).schemas ??= {};
  const out: Json = {};
  for (const body of deliveredBodies()) {
    const { example, ...schema } = body.schema;
    schemas[body.name] = schema;
    out[body.type] = {
      post: {
        operationId: body.operationId,
        summary: body.summary,
        description: body.description,
        tags: ['Webhook deliveries'],
        parameters: SIGNATURE_HEADERS.map((h) => ({ in: 'header', name: h.name, required: true, description: h.description, schema: { type: 'string' }, example: h.example })),
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${body.name}` }, example } } },
        responses: { '200': { description: 'Acknowledged (any 2xx).' } },
        security: [],
      },
    };
  }
  return out;
}

type Json = Record<string, unknown>;

/**
 * @nestjs/swagger writes OpenAPI 3.0 idioms; 3.1 schemas are JSON Schema 2020-12. Rewrites
 * `nullable: true` as a null type and single-entry `allOf` wrappers as plain `$ref`s.
 */
export function toOpenApi31<T>(doc: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node as Json)) out[k] = visit(v);
    // `allOf: [{$ref}]` is how 3.0 put a description beside a $ref; 3.1 allows the siblings.
    if (Array.isArray(out.allOf) && out.allOf.length === 1 && out.$ref === undefined) {
      const [only] = out.allOf as Json[];
      delete out.allOf;
      Object.assign(out, only);
    }
    if (typeof out.nullable !== 'boolean') return out; // (a property *named* nullable is an object)
    const nullable = out.nullable;
    delete out.nullable;
    if (!nullable) return out;
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      return out;
    }
    // A $ref or a composition: null is one more alternative.
    const { description, ...rest } = out;
    return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
  };
  return visit(doc) as T;
}

/** The document as committed in `openapi.json`: stable key order, two-space indent, final newline. */
export function serialiseOpenApiDocument(doc: OpenApiDocument): string {
  return JSON.stringify(doc, null, 2) + '\n';
}
