import type { TestProject } from 'vitest/node';
import { startTestStack, type TestStack } from '../../scripts/stack/ephemeral-stack';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: TestStack;
  }
}

export default async function setup(project: TestProject) {
  const { stack, stop } = await startTestStack();
  project.provide('stack', stack);
  return stop;
}
