import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export const OPENAPI_FILE = path.resolve(__dirname, '../../openapi.json');

type Json = Record<string, any>;

export interface Answer {
  status: number;
  body: unknown;
  text?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** JSON pointer segment: `/v1/webhooks/{webhook_id}` → `~1v1~1webhooks~1{webhook_id}`. */
const seg = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Every object schema with properties becomes closed (no undocumented fields), so a field the API
 * sends but the document does not list — a `secret` on a GET, say — fails validation.
 */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) out[k] = closeObjects(v);
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/**
 * Checks real answers against the committed OpenAPI document: the operation and the status must be
 * listed, the body must match that status's schema (or be empty when none), and every required
 * header must be present with a value of its schema. Records what was covered.
 */
export class OpenApiContract {
  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  readonly covered = new Map<string, Set<number>>();
  /** The `type`s of the delivered bodies checkDelivery passed. */
  readonly deliveriesCovered = new Set<string>();

  constructor(file = OPENAPI_FILE) {
    this.doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(closeObjects(this.doc) as Json, 'openapi.json');
  }

  operations(): { method: string; path: string; statuses: number[] }[] {
    const out = [];
    for (const [p, item] of Object.entries(this.doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) out.push({ method, path: p, statuses: Object.keys((op as Json).responses).map(Number) });
    }
    return out;
  }

  private resolve(node: Json): Json {
    if (typeof node.$ref !== 'string') return node;
    return node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((n: Json, k: string) => n[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
  }

  /** Throws with a readable reason when `answer` is not what the document promises. */
  check(method: string, template: string, answer: Answer): void {
    const op = this.doc.paths?.[template]?.[method];
    if (!op) throw new Error(`${method.toUpperCase()} ${template} is not in openapi.json`);
    const status = String(answer.status);
    const response = op.responses?.[status];
    if (!response) {
      throw new Error(`${method.toUpperCase()} ${template} answered ${status}, which openapi.json does not list (body: ${JSON.stringify(answer.body).slice(0, 300)})`);
    }
    for (const [name, ref] of Object.entries((response.headers ?? {}) as Json)) {
      const header = this.resolve(ref as Json);
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) throw new Error(`${method.toUpperCase()} ${template} ${status}: header ${name} is missing`);
        continue;
      }
      if (header.schema?.type === 'integer' && !/^\d+$/.test(String(value))) {
        throw new Error(`${method.toUpperCase()} ${template} ${status}: header ${name} is not an integer: ${value}`);
      }
    }
    const content = response.content?.['application/json'];
    if (!content) {
      if (answer.text !== undefined && answer.text !== '') throw new Error(`${method.toUpperCase()} ${template} ${status}: expected no body, got ${answer.text.slice(0, 200)}`);
    } else {
      const ref = `openapi.json#/paths/${seg(template)}/${method}/responses/${status}/content/application~1json/schema`;
      let validate = this.validators.get(ref);
      if (!validate) this.validators.set(ref, (validate = this.ajv.compile({ $ref: ref })));
      if (!validate(answer.body)) {
        throw new Error(
          `${method.toUpperCase()} ${template} ${status}: body does not match the document: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(answer.body).slice(0, 500)}`,
        );
      }
    }
    const key = `${method} ${template}`;
    if (!this.covered.has(key)) this.covered.set(key, new Set());
    this.covered.get(key)!.add(answer.status);
  }

  /**
   * Throws with a readable reason unless `body` (as a receiver got it) is valid against the schema
   * openapi.json's `webhooks` section gives the body of its `type`, as a receiver validating
   * deliveries would check it. Records the type covered.
   */
  checkDelivery(body: unknown): void {
    const type = (body as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !this.doc.webhooks?.[type]) {
      throw new Error(`a delivered body of type ${JSON.stringify(type)}, which openapi.json's webhooks do not list: ${JSON.stringify(body).slice(0, 300)}`);
    }
    const ref = `openapi.json#/webhooks/${seg(type)}/post/requestBody/content/application~1json/schema`;
    let validate = this.validators.get(ref);
    if (!validate) this.validators.set(ref, (validate = this.ajv.compile({ $ref: ref })));
    if (!validate(body)) throw new Error(`delivered ${type} body does not match openapi.json: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 800)}`);
    this.deliveriesCovered.add(type);
  }
}
