import { ConfigurableModuleBuilder, Inject } from '@nestjs/common';

export interface PaginationModuleOptions {
  /** Cursor signing secrets, newest first (CURSOR_SECRET). Empty: one is generated and kept in the `settings` table. */
  secrets?: string[];
  /** Cursor lifetime (CURSOR_TTL_SECONDS), default 24 h. */
  ttlSeconds?: number;
}

export const { ConfigurableModuleClass: PaginationConfigurableModule, MODULE_OPTIONS_TOKEN: PAGINATION_OPTIONS } =
  new ConfigurableModuleBuilder<PaginationModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
    .build();

/** `@InjectPaginationOptions() options: PaginationModuleOptions`: what forRoot / forRootAsync was given. */
export const InjectPaginationOptions = (): ParameterDecorator & PropertyDecorator => Inject(PAGINATION_OPTIONS);
