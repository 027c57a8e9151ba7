export interface ParsedArgv {
  positionals: string[];
  flags: Record<string, string | true>;
}

/** `word word --flag value --flag=value --switch`: a flag takes the next word unless it is another flag. */
export function parseArgv(argv: readonly string[]): ParsedArgv {
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!;
    if (!word.startsWith('--')) {
      positionals.push(word);
      continue;
    }
    const [name, inline] = word.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const next = argv[index + 1];
    if (inline !== undefined) flags[name] = inline;
    else if (next !== undefined && !next.startsWith('--')) flags[name] = argv[++index]!;
    else flags[name] = true;
  }
  return { positionals, flags };
}
