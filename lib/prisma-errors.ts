import { Prisma } from '../generated/prisma/client';

/** Prisma's codes this service acts on (https://www.prisma.io/docs/orm/reference/error-reference). */
const PRISMA_CODES = {
  /** A unique index refused the write: someone else holds the value (often a concurrent request). */
  uniqueViolation: 'P2002',
  /** An update or delete found no row. */
  recordMissing: 'P2025',
} as const;

const hasCode = (error: unknown, code: string) =>
  error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;

export const isUniqueViolation = (error: unknown): boolean => hasCode(error, PRISMA_CODES.uniqueViolation);
export const isRecordMissing = (error: unknown): boolean => hasCode(error, PRISMA_CODES.recordMissing);
