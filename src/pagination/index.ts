export * from './cursor-codec';
export * from './limit';
export * from './page';
