import * as fs from 'node:fs';
import * as path from 'node:path';
import { OpenApiContract } from './support/openapi';

type Json = Record<string, unknown>;

/**
 * docs/events.md shows one full body of each kind openapi.json's `webhooks` lists, and each is a
 * body a receiver could get: it validates against its kind's schema (objects closed) and carries
 * every field of its `data` (but `test`, on test events only). Both lists come from openapi.json,
 * itself built from the event catalogue, so a field added to a kind fails here until the doc's body
 * has it too.
 */
describe('docs/events.md: a full body of each kind', () => {
  const contract = new OpenApiContract();
  const doc = fs.readFileSync(path.resolve(__dirname, '../docs/events.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## A full body of each kind'));
  const bodies = [...section.matchAll(/\n### `([^`]+)`\n\n```json\n([\s\S]*?)```/g)].map((m) => ({ heading: m[1], body: JSON.parse(m[2]) as Json }));

  /** The schema at a JSON pointer of openapi.json, `$ref`s followed. */
  const resolve = (schema: Json): Json => {
    let s = schema;
    while (typeof s.$ref === 'string') s = s.$ref.slice(2).split('/').reduce<Json>((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, contract.doc as Json);
    return s;
  };
  const dataFields = (kind: string): string[] => {
    const hook = (contract.doc.webhooks as Record<string, { post: { requestBody: { content: Record<string, { schema: Json }> } } }>)[kind];
    const body = resolve(hook.post.requestBody.content['application/json'].schema);
    return Object.keys(resolve((body.properties as Record<string, Json>).data).properties as Json).filter((f) => f !== 'test');
  };

  it('has one body per kind openapi.json lists, under a heading naming it', () => {
    expect(section.length).toBeGreaterThan(100);
    expect(bodies.map((b) => b.heading)).toEqual(Object.keys(contract.doc.webhooks as Json));
    for (const { heading, body } of bodies) expect(body.type).toBe(heading);
  });

  it.each(Object.keys(contract.doc.webhooks as Json))('%s: validates against its schema and has every field of its data', (kind) => {
    const { body } = bodies.find((b) => b.heading === kind) ?? { body: undefined };
    expect(body).toBeDefined();
    expect(() => contract.checkDelivery(body)).not.toThrow();
    expect(Object.keys(body!.data as Json).sort()).toEqual(dataFields(kind).sort());
  });
});
