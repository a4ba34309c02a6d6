import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';
import { INT_SETTINGS, checkIntOption } from '../config/settings';
import { globalOptions } from '../core/configured-module';

export interface PaginationModuleOptions {
  /** Cursor signing secrets, newest first (CURSOR_SECRET). Empty: one is generated and kept in the `settings` table. */
  secrets?: string[];
  /** Cursor lifetime (CURSOR_TTL_SECONDS), default 24 h. */
  ttlSeconds?: number;
}

export const { ConfigurableModuleClass: PaginationConfigurableModule, MODULE_OPTIONS_TOKEN: PAGINATION_OPTIONS, OPTIONS_TYPE: PAGINATION_OPTIONS_TYPE, ASYNC_OPTIONS_TYPE: PAGINATION_OPTIONS_ASYNC_TYPE } =
  new ConfigurableModuleBuilder<PaginationModuleOptions>()
    .setClassMethodName('forRoot')
    // The options only are global (globalOptions); the module is imported where it is needed.
    .setExtras({ isGlobal: false }, (definition) => globalOptions(definition, checkPaginationOptions))
    .build();

/** `@InjectPaginationOptions() options: PaginationModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectPaginationOptions = (): ParameterDecorator & PropertyDecorator => Inject(PAGINATION_OPTIONS);

/** The cursor lifetime, checked at start as CURSOR_TTL_SECONDS is (the secrets are CursorKeys', checked when it is built). */
export function checkPaginationOptions(o: PaginationModuleOptions): void {
  checkIntOption(INT_SETTINGS.cursorTtlSeconds, o.ttlSeconds, "PaginationModule's ttlSeconds");
}
