import { ArgumentMetadata, Injectable, Optional, PipeTransform, Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { AppError } from './errors';

function knownFields(dto: Type<unknown>): Set<string> {
  return new Set(getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false).map((m) => m.propertyName));
}

function firstMessage(errors: ValidationError[]): string {
  for (const e of errors) {
    const msgs = Object.values(e.constraints ?? {});
    if (msgs.length > 0) return msgs[0];
    if (e.children?.length) return firstMessage(e.children);
  }
  return 'request body is invalid';
}

/**
 * Validates a JSON body against a class-validator DTO: must be an object, no unknown fields
 * (checked on the raw keys, before any transformation, so `__proto__` cannot sneak through), and
 * every constraint met. Failures are `400 VALIDATION_ERROR` naming the field.
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
    const instance = plainToInstance(dto, value, { enableImplicitConversion: false });
    const errors = await validate(instance as object, { forbidUnknownValues: true, validationError: { target: false, value: false } });
    if (errors.length > 0) throw new AppError('VALIDATION_ERROR', firstMessage(errors));
    return instance;
  }
}
