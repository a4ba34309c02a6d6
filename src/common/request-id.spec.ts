import { ensureRequestId } from './request-id';

describe('ensureRequestId', () => {
  const response = () => {
    const set: [string, string][] = [];
    const headers = new Map<string, string>();
    const res = {
      headersSent: false,
      setHeader: (name: string, value: string) => (set.push([name, value]), headers.set(name.toLowerCase(), value)),
      getHeader: (name: string) => headers.get(name.toLowerCase()),
    };
    return { set, res };
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

  it('adds nothing to the request but its id (under express each added property costs a map transition)', () => {
    const req = { headers: {} };
    const { set, res } = response();
    ensureRequestId(req, res);
    ensureRequestId(req, res);
    expect(Reflect.ownKeys(req)).toEqual(['headers', 'requestId']);
    expect(set).toHaveLength(1);
  });

  it('sets nothing on a fastify reply already sent', () => {
    const raw = { headers: {} };
    const headers: Record<string, string> = {};
    const reply = { sent: true, header: (name: string, value: string) => (headers[name] = value), getHeader: (name: string) => headers[name] };
    const wrapper = { raw, headers: {} };
    ensureRequestId(wrapper, reply);
    expect(headers).toEqual({});
  });

  it("keeps the id on fastify's Node request, and sets the header through a reply", () => {
    const raw = { headers: {} };
    const wrapper = { raw, headers: {} };
    const headers: Record<string, string> = {};
    const reply = { header: (name: string, value: string) => (headers[name.toLowerCase()] = value), getHeader: (name: string) => headers[name.toLowerCase()] };
    const id = ensureRequestId(wrapper, reply);
    expect(ensureRequestId(raw)).toBe(id);
    expect(ensureRequestId(wrapper, reply)).toBe(id);
    expect(headers).toEqual({ 'x-request-id': id });
  });
});
