import * as api from './index';

/** Every library module class the package exports, by name (AppModule is the standalone service, built from an AppConfig). */
const modules = Object.entries(api).filter(([name, value]) => name.endsWith('Module') && name !== 'AppModule' && typeof value === 'function') as [string, Record<string, unknown>][];

describe('the exported modules', () => {
  it('give every configurable module forRoot and forRootAsync, and an Inject…Options() helper', () => {
    const configurable = modules.filter(([, m]) => typeof m.forRoot === 'function' || typeof m.forRootAsync === 'function').map(([name]) => name);
    // The list is checked too, so a module losing its options (or a new one) is noticed here.
    expect(configurable.sort()).toEqual(['AuthModule', 'CryptoModule', 'DeliveryModule', 'MetricsModule', 'PaginationModule', 'PortalModule', 'SsrfModule', 'TrendhooksModule', 'TrendsModule']);
    for (const name of configurable) {
      const m = modules.find(([n]) => n === name)![1];
      expect({ name, forRoot: typeof m.forRoot, forRootAsync: typeof m.forRootAsync }).toEqual({ name, forRoot: 'function', forRootAsync: 'function' });
      const helper = `Inject${name.replace(/Module$/, '')}Options`;
      expect({ name, helper, type: typeof (api as Record<string, unknown>)[helper] }).toEqual({ name, helper, type: 'function' });
    }
  });

  it('leave the option-less modules plain (imported as they are)', () => {
    const plain = modules.filter(([, m]) => typeof m.forRoot !== 'function').map(([name]) => name);
    expect(plain.sort()).toEqual(['ApiKeysModule', 'DatabaseUnavailableModule', 'PortalSessionsModule', 'PostsModule', 'WebhooksModule']);
  });

  it('export the injection helpers of the shared providers', () => {
    expect(typeof api.InjectClock).toBe('function');
    expect(typeof api.InjectTrendhooksDataSource).toBe('function');
  });
});
