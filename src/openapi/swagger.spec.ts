import 'reflect-metadata';

type Shim = typeof import('./swagger');
type Swagger = typeof import('@nestjs/swagger');

/** A fresh copy of the shim (and, when `swaggerFirst`, of @nestjs/swagger loaded before it), as in a new process. */
function fresh(swaggerFirst: boolean): { shim: Shim; swagger: () => Swagger } {
  let shim!: Shim;
  let swagger: Swagger | undefined;
  jest.isolateModules(() => {
    if (swaggerFirst) swagger = jest.requireActual<Swagger>('@nestjs/swagger');
    shim = jest.requireActual<Shim>('./swagger');
  });
  return { shim, swagger: () => swagger ?? jest.requireActual<Swagger>('@nestjs/swagger') };
}

function documented(shim: Pick<Shim, 'ApiProperty' | 'ApiSchema' | 'ApiOperation' | 'ApiTags'>) {
  @shim.ApiSchema({ name: 'Thing' })
  class Thing {
    @shim.ApiProperty({ description: 'first' })
    a: string;

    @shim.ApiProperty({ type: 'integer', description: 'second' })
    b: number;
  }
  @shim.ApiTags('Things')
  class ThingsController {
    @shim.ApiOperation({ operationId: 'things_list', summary: 'List them.' })
    list(): Thing[] {
      return [];
    }
  }
  return { Thing, ThingsController };
}

/** Every metadata entry of the class, its prototype, its properties and its methods. */
function metadataOf(target: { prototype: object }, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const places: [string, object, string | undefined][] = [
    ['class', target, undefined],
    ['prototype', target.prototype, undefined],
    ...keys.map((k) => [`prototype.${k}`, target.prototype, k] as [string, object, string]),
    ...keys
      .filter((k) => typeof (target.prototype as Record<string, unknown>)[k] === 'function')
      .map((k) => [`method ${k}`, (target.prototype as Record<string, object>)[k], undefined] as [string, object, undefined]),
  ];
  for (const [where, obj, key] of places) {
    for (const k of key === undefined ? Reflect.getOwnMetadataKeys(obj) : Reflect.getOwnMetadataKeys(obj, key)) {
      if (String(k).startsWith('swagger/')) out[`${where} ${String(k)}`] = key === undefined ? Reflect.getOwnMetadata(k, obj) : Reflect.getOwnMetadata(k, obj, key);
    }
  }
  return out;
}

describe('the lazy @nestjs/swagger decorators', () => {
  it('record the documentation until the package is loaded, then leave exactly what its own decorators leave', () => {
    const { shim, swagger } = fresh(false);
    const lazy = documented(shim);
    expect(metadataOf(lazy.Thing, ['a', 'b'])).toEqual({});
    expect(metadataOf(lazy.ThingsController, ['list'])).toEqual({});

    shim.applyOpenApiMetadata();
    const real = documented(swagger());
    expect(Object.keys(metadataOf(real.Thing, ['a', 'b'])).length).toBeGreaterThan(0);
    expect(metadataOf(lazy.Thing, ['a', 'b'])).toEqual(metadataOf(real.Thing, ['a', 'b']));
    expect(metadataOf(lazy.ThingsController, ['list'])).toEqual(metadataOf(real.ThingsController, ['list']));
  });

  it('apply at once in a process that has loaded @nestjs/swagger already (a host documenting its app)', () => {
    const { shim, swagger } = fresh(true);
    const lazy = documented(shim);
    expect(metadataOf(lazy.Thing, ['a', 'b'])).toEqual(metadataOf(documented(swagger()).Thing, ['a', 'b']));
  });

  it('keep what was recorded before the package was loaded ahead of what comes after', () => {
    const { shim } = fresh(false);
    const { Thing } = documented(shim);
    shim.applyOpenApiMetadata();
    // Recorded before and applied now; a decorator used after the load applies at once, after them.
    shim.ApiProperty({ description: 'third' })(Thing.prototype, 'c');
    expect(Reflect.getMetadata('swagger/apiModelPropertiesArray', Thing.prototype)).toEqual([':a', ':b', ':c']);
  });
});
