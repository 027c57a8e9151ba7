export const VARIABLE_TYPES = ['object', 'string', 'number', 'boolean', 'datetime', 'enum', 'array'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

/**
 * One variable a journey can read, or an object grouping several. `open: true` on an object means any
 * path below it may be read even though its children are not all listed (a webhook's response body,
 * lead fields nobody declared): the shape is only known at run time.
 */
export interface VariableDescriptor {
  name: string;
  type: VariableType;
  description: string;
  allowedValues: string[];
  open: boolean;
  children: VariableDescriptor[];
}

export function descriptor(
  name: string,
  type: VariableType,
  description: string,
  extra: { allowedValues?: string[]; open?: boolean; children?: VariableDescriptor[] } = {},
): VariableDescriptor {
  return {
    name,
    type,
    description,
    allowedValues: extra.allowedValues ?? [],
    open: extra.open ?? false,
    children: extra.children ?? [],
  };
}

export interface DescribedPath {
  path: string;
  descriptor: VariableDescriptor;
}

/** The descriptor itself and every descendant, each with its dotted path from the root's name. */
export function describedPaths(root: VariableDescriptor): DescribedPath[] {
  const found: DescribedPath[] = [];
  const visit = (node: VariableDescriptor, path: string) => {
    found.push({ path, descriptor: node });
    for (const child of node.children) visit(child, `${path}.${child.name}`);
  };
  visit(root, root.name);
  return found;
}

/**
 * A dotted variable path such as `start.fields.plan` or `n3.outcome`. Segments may hold '-' because
 * node ids may, and start with a letter or '_' so a path never reads as a number.
 */
export const VARIABLE_PATH_SOURCE = '[A-Za-z_][A-Za-z0-9_-]*(?:\\.[A-Za-z_][A-Za-z0-9_-]*)*';
