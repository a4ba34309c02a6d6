import { DynamicModule, Module, Provider, Type } from '@nestjs/common';

/**
 * The options half of a configured module (the ConfigurableModuleBuilder's setExtras transform):
 * global, exporting only the options it was given, as TypeOrmModule.forRoot's connection is. The
 * host sets a module's options once, in its root module, and every trendhooks module that imports
 * the module by its class reads them, so they all share one instance of it.
 */
export function globalOptions(definition: DynamicModule, check?: OptionsCheck): DynamicModule {
  const checked = check ? checkedOptions(definition, check) : definition;
  const tokens = (checked.providers ?? []).map((p: Provider) => (typeof p === 'function' ? p : p.provide));
  return { ...checked, global: true, exports: tokens };
}

/** The options module with its options checked by `check` when Nest resolves them (checkedProvider). */
export function checkedOptions(definition: DynamicModule, check: OptionsCheck): DynamicModule {
  return { ...definition, providers: (definition.providers ?? []).map((p) => checkedProvider(p, check)) };
}

/** Throws when a module's options are out of range, naming the setting (src/config/settings.ts). */
export type OptionsCheck = (options: any) => void;

/**
 * The options provider of forRoot (a value) or forRootAsync (a factory; useClass and useExisting are
 * factories too), checked when Nest first resolves it: a bad option stops the start with the setting's
 * name, before any provider is built on it, rather than failing at a first request.
 */
function checkedProvider(p: Provider, check: OptionsCheck): Provider {
  if (typeof p === 'function' || !('provide' in p)) return p;
  if ('useValue' in p) {
    const value: unknown = p.useValue;
    return { provide: p.provide, useFactory: () => (check(value), value) };
  }
  if ('useFactory' in p) {
    const factory = p.useFactory;
    return { ...p, useFactory: async (...args: unknown[]) => {
      const options: unknown = await factory(...args);
      check(options);
      return options;
    } };
  }
  return p;
}

const roots = new WeakMap<Type, Type>();

/**
 * What a configured module's forRoot / forRootAsync returns: its options (globalOptions) and the
 * module itself, re-exported to the module that called forRoot only. The modules that need it import
 * it by its class: their `@Module({ imports })` says so. `isGlobal: true` puts its exports in every
 * module of the host, for a host whose own modules inject them without importing it.
 */
export function configuredModule(module: Type, options: DynamicModule, isGlobal = false): DynamicModule {
  let root = roots.get(module);
  if (!root) {
    root = class {};
    Object.defineProperty(root, 'name', { value: `${module.name}Root` });
    Module({})(root);
    roots.set(module, root);
  }
  return { module: root, global: isGlobal, imports: [options, module], exports: [module] };
}
