/**
 * English stopwords. Lower-case tokens shorter than 3 letters are dropped anyway; two-letter words
 * written in capitals are kept as tickers (`BB`, `GE`) unless listed here (`IT`, `TO`, `US` in a
 * shouted title are words, not tickers).
 * Function words, auxiliaries, apostrophe-less contractions (the tokenizer deletes apostrophes,
 * so "don't" arrives as "dont"), and filler common on Reddit ("just", "really", "anyone") that
 * would otherwise ride every subreddit-wide surge. Kept as source, not a file, so the tokenizer is
 * deterministic and bundles with no I/O.
 */
const WORDS = `
about above across actually after afterwards again against ago ain all almost alone along already also
although always among amongst amp and another any anybody anyhow anyone anything anyway anyways anywhere
are aren arent around aside ask asked asking asks away back based became because become becomes becoming
been before beforehand behind being below beside besides best better between beyond both but bye can
cannot cant could couldn couldnt did didn didnt does doesn doesnt doing don done dont down due during each
edit edited eight either else elsewhere enough etc even ever every everybody everyone everything everywhere
except far few fifteen fifth first five for former formerly forty four from front further get gets getting
give given gives giving goes going gone gonna got gotten gotta had hadn hadnt has hasn hasnt have haven havent
having hed hell hello her here hereafter hereby herein heres hers herself hes hey him himself his how however
hows http https hundred ill ima imma inc indeed instead into isn isnt its itself ive just keep kept know knows
knew last later latter least less let lets like likely lol made make makes making many may maybe mean meanwhile
might mightnt mine more moreover most mostly much must mustnt myself need needs neither never nevertheless
next nine nobody none noone nor not nothing now nowhere off often okay once one ones only onto other others
otherwise ought our ours ourselves out over overall own per perhaps please plus pretty put quite rather really
regarding said same saw say says see seem seemed seeming seems seen several shall shan she shed shell shes should
shouldn shouldnt show since six sixty some somebody somehow someone something sometime sometimes somewhere
soon still such sure take taken tell ten than thank thanks that thats the their theirs them themselves then
thence there thereafter thereby therefore therein theres these they theyd theyll theyre theyve thing things
think third thirty this those though three through throughout thru thus together too took toward towards
tried tries try trying twelve twenty two under unless until upon use used uses using very via want wanted
wants was wasn wasnt way well went were weren werent what whatever whats when whence whenever where
whereafter whereas whereby wherein wheres whereupon wherever whether which while whither who whod whoever
whole wholl whom whose why will with within without won wont would wouldn wouldnt www yeah yes yet you youd
youll your youre yours yourself yourselves youve also anyone anybody guys guy lot lots
am an as at be by do go he hi if im in is it me my no of oh ok on or pm so to up us we ya yo
`;

export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(WORDS.split(/\s+/).filter((w) => w.length > 0));
