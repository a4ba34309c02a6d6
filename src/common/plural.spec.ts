import { orList, plural } from './plural';

describe('plural', () => {
  it('counts in English', () => {
    expect([plural(1, 'delivery', 'deliveries'), plural(2, 'delivery', 'deliveries'), plural(0, 'post')]).toEqual(['1 delivery', '2 deliveries', '0 posts']);
  });
});

describe('orList', () => {
  it('joins the choices of a closed list with commas and a last "or"', () => {
    expect(orList(['a', 'b', 'c'])).toBe('a, b or c');
    expect(orList(['a', 'b'])).toBe('a or b');
    expect(orList(['a'])).toBe('a');
    expect(orList([])).toBe('');
  });
});
