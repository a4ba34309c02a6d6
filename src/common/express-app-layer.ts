import type { InjectionToken, OptionalFactoryDependency, Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
/** A handler on every request, express-style (its own request and response types). */
export type AppLayer = (req: never, res: never, next: () => void) => void;

/**
 * A provider (`token`) that puts the handler `make(...deps)` builds straight on the express app
 * when Nest builds the module: ahead of the routes `init()` registers, it runs on every request of
 * the app without a Nest middleware layer's cost (path matching, Nest's proxy and its exception
 * zone). Its value says whether it did. It does not under fastify (middleware runs only once Nest
 * has registered middie in `init()`), in an application context without HTTP, or in an app built
 * from a compiled testing module (`Test.createTestingModule`), whose providers are built before
 * `createNestApplication()` makes the HTTP adapter: the module's `configure()` then mounts the
 * handler as a Nest middleware where it needs one.
 */
export function expressAppLayer(token: InjectionToken, inject: (InjectionToken | OptionalFactoryDependency)[], make: (...deps: never[]) => AppLayer): Provider {
  return {
    provide: token,
    inject: [{ token: HttpAdapterHost, optional: true }, ...inject],
    useFactory: (host: HttpAdapterHost | undefined, ...deps: never[]) => {
      if (host?.httpAdapter?.getType() !== 'express') return false;
      host.httpAdapter.use(make(...deps));
      return true;
    },
  };
}
