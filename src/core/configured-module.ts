import { DynamicModule, Module, Provider, Type } from '@nestjs/common';

/**
 * The options half of a configured module (the ConfigurableModuleBuilder's setExtras transform):
 * global, exporting only the options it was given, as TypeOrmModule.forRoot's connection is. The
 * host sets a module's options once, in its root module, and every trendhooks module that imports
 * the module by its class reads them, so they all share one instance of it.
 */
export function globalOptions(definition: DynamicModule): DynamicModule {
  const tokens = (definition.providers ?? []).map((p: Provider) => (typeof p === 'function' ? p : p.provide));
  return { ...definition, global: true, exports: tokens };
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
