import type * as SwaggerExports from '@nestjs/swagger';
import { requireOptional } from '../common/optional-package';

/**
 * @nestjs/swagger's decorators, without loading @nestjs/swagger: a host that does not document its
 * API need not install it. Each decorator here records its application and replays it with the
 * real decorator of the same name, in the same order, once the package is in the process:
 *
 * - at once, when the process has loaded @nestjs/swagger already (a host that documents its app);
 * - when the OpenAPI document is built (buildOpenApiDocument: GET /openapi.json, `trendhooks openapi`),
 *   which loads it, or fails with one line naming the package;
 * - when trendhooks' modules start, or a host reads TRENDHOOKS_OPENAPI_COMPONENTS to merge into its
 *   own document, if @nestjs/swagger is installed (applyOpenApiMetadata).
 *
 * The metadata ends up where @nestjs/swagger's own decorators put it, so SwaggerModule.createDocument
 * reads trendhooks' routes as before.
 */
type Swagger = typeof SwaggerExports;
type Decorate = (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => unknown;

const SWAGGER = '@nestjs/swagger';

let swagger: Swagger | undefined;
/** The applications recorded while @nestjs/swagger is not loaded, oldest first. */
const pending: ((s: Swagger) => void)[] = [];
/** Where @nestjs/swagger resolves from here: undefined until asked, null when it is not installed. */
let resolved: string | null | undefined;

function resolvedFile(): string | null {
  if (resolved === undefined) {
    try {
      resolved = require.resolve(SWAGGER);
    } catch {
      resolved = null;
    }
  }
  return resolved;
}

/** @nestjs/swagger if this process has loaded it (or we have), without loading it. */
function loadedSwagger(): Swagger | undefined {
  if (swagger) return swagger;
  const file = resolvedFile();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (file !== null && require.cache[file]) swagger = require(file) as Swagger;
  return swagger;
}

function flush(s: Swagger): void {
  swagger = s;
  for (const apply of pending.splice(0)) apply(s);
}

function record(apply: (s: Swagger) => void): void {
  pending.push(apply);
  const s = loadedSwagger();
  if (s) flush(s);
}

/**
 * @nestjs/swagger, loaded now, with every recorded decorator applied. `reason` says what needs it,
 * for the one-line error when it is not installed.
 */
export function loadSwagger(reason: string): Swagger {
  flush(swagger ?? requireOptional<Swagger>(SWAGGER, reason));
  return swagger!;
}

/**
 * Applies the recorded decorators when @nestjs/swagger is installed (loading it), and does nothing
 * when it is not. For a host documenting trendhooks' routes with its own SwaggerModule.createDocument.
 */
export function applyOpenApiMetadata(): void {
  if (pending.length === 0) return;
  const installed = loadedSwagger() !== undefined || resolvedFile() !== null;
  if (installed) loadSwagger("trendhooks' OpenAPI metadata was asked for");
}

/** Applies the recorded decorators if the process has loaded @nestjs/swagger, loading nothing. */
export function applyLoadedOpenApiMetadata(): void {
  const s = loadedSwagger();
  if (s) flush(s);
}

/** The decorator `make` builds from @nestjs/swagger (or with it, as SetMetadata of one of its keys), applied when the package is there. */
export function lazyDecorator<D = MethodDecorator & ClassDecorator>(make: (s: Swagger) => unknown): D {
  const decorate: Decorate = (target, key, descriptor) => {
    record((s) => (make(s) as Decorate)(target, key, descriptor));
  };
  return decorate as D;
}

/** The decorator factory `name` of @nestjs/swagger, with the same signature. */
function lazy<K extends keyof Swagger>(name: K): Swagger[K] {
  const factory = (...args: unknown[]) => lazyDecorator((s) => (s[name] as (...a: unknown[]) => Decorate)(...args));
  return factory as unknown as Swagger[K];
}

export const ApiBearerAuth = lazy('ApiBearerAuth');
export const ApiBody = lazy('ApiBody');
export const ApiExcludeController = lazy('ApiExcludeController');
export const ApiOperation = lazy('ApiOperation');
export const ApiParam = lazy('ApiParam');
export const ApiProperty = lazy('ApiProperty');
export const ApiPropertyOptional = lazy('ApiPropertyOptional');
export const ApiQuery = lazy('ApiQuery');
export const ApiResponse = lazy('ApiResponse');
export const ApiSchema = lazy('ApiSchema');
export const ApiTags = lazy('ApiTags');
