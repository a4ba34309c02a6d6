import { resolveDeliveryOptions } from './delivery.options';

describe('resolveDeliveryOptions: DNS lookups per customer', () => {
  it('defaults to an eighth of the concurrency, at least 1', () => {
    expect(resolveDeliveryOptions({}).dnsLookupsPerCustomer).toBe(8);
    expect(resolveDeliveryOptions({ concurrency: 100 }).dnsLookupsPerCustomer).toBe(12);
    expect(resolveDeliveryOptions({ concurrency: 7 }).dnsLookupsPerCustomer).toBe(1);
    expect(resolveDeliveryOptions({ concurrency: 1 }).dnsLookupsPerCustomer).toBe(1);
  });

  it('takes a whole number from 1 to the concurrency', () => {
    expect(resolveDeliveryOptions({ concurrency: 16, dnsLookupsPerCustomer: 16 }).dnsLookupsPerCustomer).toBe(16);
    expect(resolveDeliveryOptions({ concurrency: 16, dnsLookupsPerCustomer: 1 }).dnsLookupsPerCustomer).toBe(1);
    for (const bad of [0, -1, 2.5, 17, Number.NaN]) {
      expect(() => resolveDeliveryOptions({ concurrency: 16, dnsLookupsPerCustomer: bad })).toThrow(/DNS lookups per customer \(.*\) must be a whole number from 1 to the concurrency \(16\)/);
    }
  });
});
