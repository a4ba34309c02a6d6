import { knownAuthor, postSource, titleSignature } from './sources';

describe('post sources', () => {
  it('is the author when known, case aside', () => {
    expect(postSource({ id: 'a', title: 'x', author: 'Alice' })).toBe('u/alice');
    expect(postSource({ id: 'b', title: 'something else', author: 'alice' })).toBe('u/alice');
  });

  it('falls back to the title when the author is deleted, removed or absent', () => {
    for (const author of ['[deleted]', '[removed]', '', undefined, null]) expect(knownAuthor(author)).toBeNull();
    const a = postSource({ id: 'a', title: 'SOS to the MOON!!', author: '[deleted]' });
    const b = postSource({ id: 'b', title: 'sos to the moon', author: '[deleted]' });
    const c = postSource({ id: 'c', title: 'SOS earnings beat', author: '[deleted]' });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('takes a name no Reddit account can have (a dump\'s per-post stand-in for a deleted one) as unknown', () => {
    expect(knownAuthor('u_del:kvzton')).toBeNull();
    expect(knownAuthor('u_fe397e8a83')).toBe('u_fe397e8a83');
    expect(knownAuthor('Some-User_9')).toBe('some-user_9');
    const a = postSource({ id: 'a', title: 'You chose to go to the moon?', author: 'u_del:kvzton' });
    expect(a).toBe(postSource({ id: 'b', title: 'you chose to go to the MOON', author: 'u_del:kvztzn' }));
  });

  it('keeps a title without letters or digits to its own post', () => {
    expect(titleSignature('🚀🚀 !!')).toBe('');
    expect(postSource({ id: 'x1', title: '🚀🚀 !!' })).not.toBe(postSource({ id: 'x2', title: '🚀🚀 !!' }));
    expect(titleSignature('Café, Москва!')).toBe('caféмосква');
  });
});
