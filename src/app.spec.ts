import { HEAP_GROWING_PERCENT, tuneHeap } from './app';

describe('tuneHeap', () => {
  it('sets the heap growing percent of the standalone service', () => {
    expect(tuneHeap([], '')).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    expect(tuneHeap(['--enable-source-maps'], '--max-old-space-size=2048')).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it("leaves an operator's own setting alone, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(tuneHeap(['--heap-growing-percent=50'], '')).toEqual([]);
    expect(tuneHeap([], '--enable-source-maps --heap_growing_percent=80')).toEqual([]);
    // A flag that merely starts alike is not the same setting.
    expect(tuneHeap(['--heap-growing-percentage=50'], '')).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });
});
