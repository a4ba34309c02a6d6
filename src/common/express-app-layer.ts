import type { InjectionToken, OptionalFactoryDependency, Provider } from '@nestjs/common';
import { AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import type { Observable } from 'rxjs';

/** A handler on every request, express-style (its own request and response types). */
export type AppLayer = (req: never, res: never, next: () => void) => void;

/**
 * Runs `install` with the app's HTTP adapter as soon as there is one, which is before `init()`
 * registers Nest's body parsers, middleware and routes: at once for an app from
 * `NestFactory.create` (the adapter is set before the modules are built), or, for an app built
 * from a compiled testing module (`Test.createTestingModule(...).compile()`, then
 * `createNestApplication()`), when `createNestApplication()` sets it, through
 * `HttpAdapterHost.init$` (Nest 11.1 and later; before that, only an adapter already there is
 * seen). Never in an application context without HTTP. Answers whether it has run by now.
 */
export function whenHttpAdapter(host: HttpAdapterHost | undefined, install: (adapter: AbstractHttpAdapter) => void): () => boolean {
  let done = false;
  const run = (): void => {
    if (done || !host?.httpAdapter) return;
    done = true;
    install(host.httpAdapter);
  };
  const init$ = (host as { init$?: Observable<void> } | undefined)?.init$;
  if (init$) init$.subscribe({ complete: run });
  else run();
  return () => done;
}

/**
 * A provider (`token`) that puts the handler `make(...deps)` builds straight on the express app
 * (whenHttpAdapter): ahead of the routes, it runs on every request of the app without a Nest
 * middleware layer's cost (path matching, Nest's proxy and its exception zone). Its value answers,
 * from the module's `configure()` on, whether it did: not under fastify (middleware runs only once
 * Nest has registered middie in `init()`), nor where the adapter came too late for it; the module
 * then mounts the handler as a Nest middleware where it needs one.
 */
export function expressAppLayer(token: InjectionToken, inject: (InjectionToken | OptionalFactoryDependency)[], make: (...deps: never[]) => AppLayer): Provider {
  return {
    provide: token,
    inject: [{ token: HttpAdapterHost, optional: true }, ...inject],
    useFactory: (host: HttpAdapterHost | undefined, ...deps: never[]) => {
      let mounted = false;
      whenHttpAdapter(host, (adapter) => {
        if (adapter.getType() !== 'express') return;
        adapter.use(make(...deps));
        mounted = true;
      });
      return { mounted: () => mounted };
    },
  };
}

/** The value of an expressAppLayer provider. */
export interface ExpressAppLayerState {
  mounted(): boolean;
}
