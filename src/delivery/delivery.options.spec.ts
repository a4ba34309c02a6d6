import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { receiverCaOf, resolveDeliveryOptions } from './delivery.options';

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

describe('receiverCaOf: the extra CA trusted for receivers', () => {
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-receiver-ca-'));
    fs.writeFileSync(path.join(dir, 'ca.pem'), PEM);
    fs.writeFileSync(path.join(dir, 'not-a-cert.pem'), 'hello\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads DELIVERY_CA_FILE when the module is given no ca, a relative path from the working directory', () => {
    expect(receiverCaOf({}, { DELIVERY_CA_FILE: path.join(dir, 'ca.pem') }, '/')).toEqual({ ca: PEM, file: path.join(dir, 'ca.pem') });
    expect(receiverCaOf({ ca: undefined }, { DELIVERY_CA_FILE: ' ca.pem ' }, dir)).toEqual({ ca: PEM, file: 'ca.pem' });
  });

  it('takes the ca option over the environment; null trusts no extra CA whatever the environment says', () => {
    const env = { DELIVERY_CA_FILE: path.join(dir, 'ca.pem') };
    expect(receiverCaOf({ ca: 'given' }, env, dir)).toEqual({ ca: 'given', file: null });
    expect(receiverCaOf({ ca: null }, env, dir)).toEqual({ ca: undefined, file: null });
    expect(receiverCaOf({}, {}, dir)).toEqual({ ca: undefined, file: null });
    expect(receiverCaOf({}, { DELIVERY_CA_FILE: '  ' }, dir)).toEqual({ ca: undefined, file: null });
  });

  it('stops the app with one line naming DELIVERY_CA_FILE when its file is missing or holds no certificate', () => {
    expect(() => receiverCaOf({}, { DELIVERY_CA_FILE: 'missing.pem' }, dir)).toThrow(/^DELIVERY_CA_FILE: ENOENT: no such file or directory, open '.*missing\.pem'$/);
    expect(() => receiverCaOf({}, { DELIVERY_CA_FILE: 'not-a-cert.pem' }, dir)).toThrow('DELIVERY_CA_FILE: not-a-cert.pem holds no PEM certificate');
  });
});
