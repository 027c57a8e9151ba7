// Cuts Shopify's Admin GraphQL schema down to what the CRM import reads (docs/features/crm.md#the-store-twin), and
// writes it under vendor/graphql/shopify-admin/ with its provenance.
//
//   tsx scripts/cut-shopify-admin-schema.ts <git-dir> <commit> [<path>]
//
// <git-dir> is a git directory of Shopify/cli (the fetch tool brings one as a bare snapshot); <path> defaults to the
// Admin schema that repository vendors from Shopify's own source (packages/store/.../admin_schema.graphql).
// Deterministic: the same commit gives the same bytes.
//
// What is kept: QueryRoot.customers (its arguments as published), the connection, edge and PageInfo types, and of
// Customer and CustomerPhoneNumber the fields the import selects; every type those reach (enums, scalars) whole.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  GraphQLObjectType,
  GraphQLSchema,
  buildSchema,
  printSchema,
  type GraphQLFieldConfigMap,
  type GraphQLNamedType,
} from 'graphql';
import { projectRoot } from './stack/paths';

const REPOSITORY = 'Shopify/cli';
const DEFAULT_PATH = 'packages/store/src/cli/api/graphql/admin/admin_schema.graphql';
const LICENCE = 'LICENSE.Shopify-cli';
const OUTPUT = path.join(projectRoot, 'vendor/graphql/shopify-admin');

/** Type name -> the fields kept (undefined: every field). */
const KEPT: Record<string, readonly string[] | undefined> = {
  QueryRoot: ['customers'],
  CustomerConnection: ['edges', 'nodes', 'pageInfo'],
  CustomerEdge: ['cursor', 'node'],
  PageInfo: undefined,
  Customer: ['id', 'displayName', 'firstName', 'lastName', 'defaultPhoneNumber'],
  CustomerPhoneNumber: ['phoneNumber', 'marketingState'],
};

function cut(full: GraphQLSchema): GraphQLSchema {
  const made = new Map<string, GraphQLObjectType>();
  const objectOf = (name: string): GraphQLObjectType => {
    const known = made.get(name);
    if (known) return known;
    const original = full.getType(name);
    if (!(original instanceof GraphQLObjectType)) throw new Error(`${name} is not an object type of the schema`);
    const config = original.toConfig();
    const wanted = KEPT[name];
    const type: GraphQLObjectType = new GraphQLObjectType({
      ...config,
      interfaces: [],
      fields: () => {
        const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
        for (const [fieldName, field] of Object.entries(config.fields)) {
          if (wanted && !wanted.includes(fieldName)) continue;
          fields[fieldName] = { ...field, type: swap(field.type) as never };
        }
        for (const fieldName of wanted ?? [])
          if (!fields[fieldName]) throw new Error(`${name}.${fieldName} is not in the schema`);
        return fields;
      },
    });
    made.set(name, type);
    return type;
  };
  // Object types of KEPT are rebuilt (cut); anything else (enums, scalars, inputs) is taken whole.
  const swap = (type: unknown): unknown => {
    const wrapped = type as { ofType?: unknown; constructor: new (inner: unknown) => unknown };
    if (wrapped.ofType) return new wrapped.constructor(swap(wrapped.ofType));
    const named = type as GraphQLNamedType;
    return named.name in KEPT ? objectOf(named.name) : named;
  };
  return new GraphQLSchema({ query: objectOf('QueryRoot') });
}

function main() {
  const [gitDir, commit, sourcePath = DEFAULT_PATH] = process.argv.slice(2);
  if (!gitDir || !commit) throw new Error('usage: tsx scripts/cut-shopify-admin-schema.ts <git-dir> <commit> [<path>]');
  const sdl = execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${sourcePath}`], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const schema = cut(buildSchema(sdl, { assumeValidSDL: true }));
  mkdirSync(OUTPUT, { recursive: true });
  writeFileSync(path.join(OUTPUT, 'admin.customers.graphql'), `${printSchema(schema)}\n`);
  writeFileSync(
    path.join(OUTPUT, LICENCE),
    execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:LICENSE`], { encoding: 'utf8' }),
  );
  const sha256 = createHash('sha256').update(sdl).digest('hex');
  writeFileSync(
    path.join(OUTPUT, 'SOURCE'),
    [
      `repository: https://github.com/${REPOSITORY}`,
      `path: ${sourcePath}`,
      `commit: ${commit}`,
      `sha256 of the source file: ${sha256}`,
      'cut by: scripts/cut-shopify-admin-schema.ts (QueryRoot.customers and what it reaches; Customer and',
      '  CustomerPhoneNumber cut to the fields the import selects)',
      'version: Shopify/cli vendors the Admin API as Shopify publishes it internally (unstable, October 2025); no public',
      '  repository holding the 2025-04 schema was found. Every field the import selects exists in 2025-04',
      '  (Customer.defaultPhoneNumber, CustomerPhoneNumber.marketingState, CustomerSmsMarketingState).',
      `licence: MIT, ${LICENCE} beside this file`,
      '',
    ].join('\n'),
  );
  console.log(`wrote ${path.relative(projectRoot, OUTPUT)}/admin.customers.graphql from ${REPOSITORY}@${commit}`);
}

main();
