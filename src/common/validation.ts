import { ArgumentMetadata, Injectable, Optional, PipeTransform, Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { AppError } from './errors';
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeep } from './json-body.middleware';

const SCALARS = new Map<unknown, string>([
  [String, 'a string'],
  [Number, 'a number'],
  [Boolean, 'a boolean'],
]);

/**
 * A field that holds an object or an array although the DTO declares no nested or array rule for
 * it: refused before class-transformer walks into it. The declared TypeScript type, where emitted,
 * words the message.
 */
function structuredWhereScalar(dto: Type<unknown>, value: object): AppError | undefined {
  let structured: Set<string> | undefined;
  for (const [key, v] of Object.entries(value)) {
    if (v === null || typeof v !== 'object') continue;
    structured ??= takesStructure(dto);
    if (structured.has(key)) continue;
    const scalar = SCALARS.get(Reflect.getMetadata('design:type', dto.prototype as object, key));
    const what = Array.isArray(v) ? 'an array' : 'an object';
    return new AppError('VALIDATION_ERROR', scalar ? `${key} must be ${scalar}, not ${what}` : `${key} must be a single value, not ${what}`);
  }
  return undefined;
}

/** Fields of `dto` that may hold an object or array: nested validation, or an object/array rule. */
function takesStructure(dto: Type<unknown>): Set<string> {
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', true, false)
      .filter((m) => m.type === 'nestedValidation' || /^(isObject|isArray|isNotEmptyObject|array)/.test(m.name ?? ''))
      .map((m) => m.propertyName),
  );
}

function knownFields(dto: Type<unknown>): Set<string> {
  return new Set(getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false).map((m) => m.propertyName));
}

/**
 * Rules about what a field holds, answered before any rule about its content: `"url": 123` breaks
 * `@MaxLength` too (class-validator fails it for non-strings, and lists it first, since decorators
 * register bottom-up), but what the caller must hear is that url must be a string.
 */
const TYPE_RULES = ['isDefined', 'isString', 'isBoolean', 'isNumber', 'isInt', 'isArray', 'isObject'];

function firstMessage(errors: ValidationError[]): string {
  for (const e of errors) {
    const constraints = e.constraints ?? {};
    const typeRule = TYPE_RULES.find((rule) => constraints[rule] !== undefined);
    if (typeRule) return constraints[typeRule];
    const msgs = Object.values(constraints);
    if (msgs.length > 0) return msgs[0];
    if (e.children?.length) return firstMessage(e.children);
  }
  return 'request body is invalid';
}

/**
 * Validates a JSON body against a class-validator DTO: must be an object, no unknown fields
 * (checked on the raw keys, before any transformation, so `__proto__` cannot sneak through), no
 * deeper than MAX_JSON_DEPTH, no object or array where the DTO expects a single value (so
 * class-transformer never recurses into hostile nesting), and every constraint met. Failures are
 * `400 VALIDATION_ERROR` naming the field.
 */
@Injectable()
export class BodyValidationPipe implements PipeTransform {
  /**
   * `dto` given: validate against it whatever the parameter's declared type. Routes pass it and
   * type the parameter with an interface, so that a host app's global ValidationPipe (which only
   * validates class-typed parameters) cannot reshape or re-judge the body first.
   */
  constructor(@Optional() private readonly dto?: Type<unknown>) {}

  async transform(value: unknown, meta: ArgumentMetadata): Promise<unknown> {
    const dto = this.dto ?? (meta.metatype as Type<unknown> | undefined);
    if (!dto || meta.type !== 'body') return value;
    if (value === undefined) throw new AppError('VALIDATION_ERROR', 'request body is required: a JSON object');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new AppError('VALIDATION_ERROR', 'request body must be a JSON object');
    }
    const fields = knownFields(dto);
    for (const key of Object.keys(value)) {
      if (!fields.has(key)) throw new AppError('VALIDATION_ERROR', `unknown field ${JSON.stringify(key).slice(0, 80)}`);
    }
    // Bodies parsed by a host app's own parser have not been through JsonBodyMiddleware's bound.
    if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw tooDeep();
    const wrongType = structuredWhereScalar(dto, value);
    if (wrongType) throw wrongType;
    const instance = plainToInstance(dto, value, { enableImplicitConversion: false });
    const errors = await validate(instance as object, { forbidUnknownValues: true, validationError: { target: false, value: false } });
    if (errors.length > 0) throw new AppError('VALIDATION_ERROR', firstMessage(errors));
    return instance;
  }
}
