import { errorChain } from './error-chain';

describe('errorChain', () => {
  it('walks cause, driverError and AggregateError members breadth first', () => {
    const root = new Error('root');
    const driver = Object.assign(new Error('driver'), { code: 'ECONNREFUSED' });
    const wrapped = Object.assign(new Error('query failed'), { driverError: driver });
    const agg = new AggregateError([wrapped, new Error('other')], 'many');
    const top = new Error('top', { cause: agg });
    (root as { cause?: unknown }).cause = top;
    const messages = [...errorChain(root)].map((e) => e.message);
    expect(messages).toEqual(['root', 'top', 'many', 'query failed', 'other', 'driver']);
  });

  it('stops on cycles and at its bound', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect([...errorChain(a)].map((e) => e.message)).toEqual(['a', 'b']);
    let deep: Error = new Error('0');
    for (let i = 1; i < 100; i++) deep = new Error(String(i), { cause: deep });
    expect([...errorChain(deep, 10)]).toHaveLength(10);
  });

  it('yields nothing for non-objects', () => {
    expect([...errorChain('text')]).toEqual([]);
    expect([...errorChain(null)]).toEqual([]);
  });
});
