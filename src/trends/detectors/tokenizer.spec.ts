import fc from 'fast-check';
import { ENGLISH_STOPWORDS } from './stopwords';
import { keywordOf, MAX_TOKEN_LENGTH, postKeywords, stem, tokenize } from './tokenizer';

describe('tokenize', () => {
  it('lower-cases and splits on anything that is not a letter, mark or digit', () => {
    expect(tokenize('GPU Prices: RTX-5090 launch!!')).toEqual(['gpu', 'price', 'rtx', '5090', 'launch']);
  });

  it('keeps Unicode letters and digits', () => {
    expect(tokenize('Café in Москва, 東京タワー and Zürich 2024')).toEqual(['café', 'москва', '東京タワー', 'zürich', '2024']);
  });

  it('strips URLs', () => {
    expect(tokenize('see https://example.com/some/path?x=1 and www.foo.org/bar or [link](http://a.b/c)')).toEqual(['link']);
  });

  it('deletes apostrophes instead of splitting on them', () => {
    expect(tokenize("Don't stop Reddit’s servers")).toEqual(['stop', 'reddit', 'server']);
  });

  it('drops stopwords and tokens shorter than 3 characters', () => {
    expect(tokenize('I am at the zoo with an ox and a yak')).toEqual(['zoo', 'yak']);
    expect(tokenize('the and just really anyone')).toEqual([]);
  });

  it('drops tokens longer than the maximum', () => {
    expect(tokenize('a'.repeat(MAX_TOKEN_LENGTH + 1) + ' zebra')).toEqual(['zebra']);
  });

  it('applies one light suffix rule', () => {
    const cases: [string, string][] = [
      ['cats', 'cat'],
      ['boxes', 'box'],
      ['watches', 'watch'],
      ['classes', 'class'],
      ['stories', 'story'],
      ['games', 'game'],
      ['running', 'run'],
      ['playing', 'play'],
      ['spelling', 'spell'],
      ['played', 'play'],
      ['stopped', 'stop'],
      ['added', 'add'],
      ['need', 'need'],
      ['speed', 'speed'],
      ['analysis', 'analysis'],
      ['bonus', 'bonus'],
      ['glass', 'glass'],
      ['king', 'king'],
      ['string', 'string'],
      ['bus', 'bus'],
    ];
    for (const [word, expected] of cases) expect([word, stem(word)]).toEqual([word, expected]);
  });

  it('postKeywords counts a keyword once per post, across title and self-text', () => {
    expect(postKeywords('Cats cats CATS', 'fluffy cats and a cat')).toEqual(['cat', 'fluffy']);
  });

  it('keywordOf: null for stopwords (also after stemming)', () => {
    expect(keywordOf('the')).toBeNull();
    expect(keywordOf('others')).toBeNull(); // "others" → "other", a stopword
    expect(keywordOf('launches')).toBe('launch');
  });

  it('properties: tokens are lower-case, 3+ chars unless a ticker, no stopwords, deterministic', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        const a = tokenize(text);
        expect(tokenize(text)).toEqual(a);
        for (const t of a) {
          expect(t).toBe(t.toLowerCase());
          // Shorter only where the text has it as a ticker: a word in capitals or a cashtag (BB, $F).
          if (t.length < 3) expect({ t, ticker: new RegExp(`(?<![\\p{L}\\p{M}\\p{N}])\\$?${t.toUpperCase()}(?![\\p{L}\\p{M}\\p{N}])`, 'u').test(text) }).toEqual({ t, ticker: true });
          expect(t.length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
          expect(ENGLISH_STOPWORDS.has(t)).toBe(false);
          expect(/^[\p{L}\p{M}\p{N}]+$/u.test(t)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('tickers', () => {
  it('keeps cashtags as keywords, the same keyword as the bare ticker, stopword letters included', () => {
    expect(tokenize('$SOS to the moon, SOS earnings')).toEqual(['sos', 'moon', 'sos', 'earning']);
    expect(tokenize('$BB and $F and $ON')).toEqual(['bb', 'f', 'on']);
    expect(postKeywords('$GME', 'GME squeeze')).toEqual(['gme', 'squeeze']);
  });

  it('keeps two-letter words in capitals (BB) but not two-letter stopwords or lower-case ones', () => {
    expect(tokenize('BB is up, bb is not')).toEqual(['bb']);
    expect(tokenize('IT IS GOING TO THE MOON WITH BB')).toEqual(['moon', 'bb']);
    expect(tokenize('I am OK, A+ DD on GE')).toEqual(['dd', 'ge']);
  });

  it('is not fooled by prices, long cashtags or apostrophes', () => {
    expect(tokenize('$500 $5k $ABCDEFGH')).toEqual(['500', 'abcdefgh']);
    expect(tokenize("$GME's run")).toEqual(['gme', 'run']);
  });
});
