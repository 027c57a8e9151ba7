// Operator CLI: `npm run -s admin -- <command> [--flags]`. One JSON object on stdout per command;
// bad input exits non-zero with a one-line message on stderr.
import { createDatabase } from '../lib/database';
import { parseArgv } from './argv';
import { resolveDatabaseUrl } from './database-url';
import { adminCommands as coreCommands, UsageError } from './commands';
import { sheetsCommands } from './sheets-commands';
import { functionsCommands } from './functions-commands';
import { calendarCommands } from './calendar-commands';
import { ConflictError, NotFoundError } from '../lib/operator-refusals';
import { ConfigError } from '../lib/config-error';

const adminCommands = { ...coreCommands, ...sheetsCommands, ...functionsCommands, ...calendarCommands };

async function main(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgv(argv);
  // Commands are two words (`number assign`) or three (`whatsapp sender connect`).
  const name =
    [3, 2].map((words) => positionals.slice(0, words).join(' ')).find((candidate) => adminCommands[candidate]) ??
    positionals.slice(0, 2).join(' ');
  const command = adminCommands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"; commands: ${Object.keys(adminCommands).join(', ')}\n`);
    return 64;
  }
  const db = createDatabase(resolveDatabaseUrl(), { poolSize: 2 });
  try {
    const result = await command(db, flags);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof NotFoundError || error instanceof ConflictError) {
      process.stderr.write(`${error.message}\n`);
      return error instanceof UsageError ? 64 : 1;
    }
    // A missing or malformed SECRETS_KEYS: one line naming it, the exit code of loadConfigOrExit.
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 78;
    }
    process.stderr.write(`admin ${name} failed: ${describe(error)}\n`);
    return 1;
  } finally {
    await db.$disconnect();
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n').find((line) => line.trim()) ?? 'unknown error';
}

process.exitCode = await main(process.argv.slice(2));
