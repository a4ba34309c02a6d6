import { ensureRequestId } from './request-id';

describe('ensureRequestId', () => {
  const response = () => {
    const set: [string, string][] = [];
    return { set, res: { headersSent: false, setHeader: (name: string, value: string) => set.push([name, value]) } };
  };

  it('keeps a plain caller id and makes one otherwise', () => {
    expect(ensureRequestId({ headers: { 'x-request-id': 'abc-12345' } })).toBe('abc-12345');
    expect(ensureRequestId({ headers: { 'x-request-id': 'bad id\n' } })).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('sets X-Request-Id once however many layers ask (middleware, access log, handler, filter)', () => {
    const req = { headers: {} };
    const { set, res } = response();
    const ids = [ensureRequestId(req, res), ensureRequestId(req, res), ensureRequestId(req, res)];
    expect(new Set(ids).size).toBe(1);
    expect(set).toEqual([['X-Request-Id', ids[0]]]);
  });

  it("keeps the id on fastify's Node request, and sets the header through a reply", () => {
    const raw = { headers: {} };
    const wrapper = { raw, headers: {} };
    const headers: Record<string, string> = {};
    const id = ensureRequestId(wrapper, { header: (name: string, value: string) => (headers[name] = value) });
    expect(ensureRequestId(raw)).toBe(id);
    expect(headers).toEqual({ 'X-Request-Id': id });
  });
});
