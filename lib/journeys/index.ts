export * from './descriptor';
export * from './definition';
export * from './templates';
export * from './conditions';
export * from './catalog';
export * from './validator';
export * from './awaiting';
