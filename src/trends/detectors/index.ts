/** Public surface of the trend detectors: pure, event-time, no I/O, no clock, no environment. */
export {
  DEFAULT_RISING_PARAMS,
  DEFAULT_STORY_PARAMS,
  DEFAULT_SURGE_PARAMS,
  DEFAULT_VELOCITY_PARAMS,
  resolveRisingParams,
  resolveStoryParams,
  resolveSurgeParams,
  resolveVelocityParams,
} from './params';
export type { RisingParams, StoryParams, SurgeParams, VelocityParams } from './params';
export { createStoryState, observeStoryPosts, poissonDeviance, storyText } from './stories';
export { knownAuthor, postSource } from './sources';
export type { StoryState } from './stories';
export { bucketStartOf, createSurgeState, fillSurgeGaps, forgetSurgeSource, hourOfWeek, observeSurgeBucket, observeSurgeGap } from './surge';
export type { SurgeState } from './surge';
export { binomialDeviance, createVelocityState, observeVelocityCounts, observeVelocityPosts, velocityBaseline } from './velocity';
export { KeywordTable } from './hash-tables';
export type { VelocityPost, VelocityState } from './velocity';
export {
  keywordOf,
  MAX_TOKEN_LENGTH,
  MIN_TOKEN_LENGTH,
  postKeywords,
  scanRawTokens,
  scanSpans,
  scanTokens,
  spanHash,
  stem,
  tokenize,
} from './tokenizer';
export type { SpanSink, TokenSink } from './tokenizer';
export { ENGLISH_STOPWORDS } from './stopwords';
export { createRisingState, observeRising } from './rising';
export type { RisingObservation, RisingState } from './rising';
export { eventKey } from './event-key';
export { backtest, BACKTEST_KINDS, inferBucketMs, LabelsParseError, parseLabelWindows, parseSeriesCsv, runBacktest, scoreBacktest, SeriesParseError, velocityUpper } from './backtest';
export type { BacktestKind, BacktestPoint, BacktestRun, LabelledScore, SeriesPoint, VelocityBacktestParams } from './backtest';
export { backtestSvg } from './plot';
export type { PlotOptions, PlotWindow } from './plot';
