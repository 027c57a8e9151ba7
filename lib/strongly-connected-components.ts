/**
 * The strongly connected components of a directed graph given as each node's successors (every
 * successor must be a key too), by Tarjan's algorithm; components come out with their nodes in the
 * order of the keys. A component of more than one node, or of a node that is its own successor, is a cycle.
 */
export function stronglyConnectedComponents(successors: Map<string, string[]>): string[][] {
  const order = new Map([...successors.keys()].map((id, index) => [id, index]));
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (id: string) => {
    index.set(id, index.size);
    lowLink.set(id, index.get(id)!);
    stack.push(id);
    onStack.add(id);
    for (const next of successors.get(id)!) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(id, Math.min(lowLink.get(id)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(id, Math.min(lowLink.get(id)!, index.get(next)!));
      }
    }
    if (lowLink.get(id) !== index.get(id)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === id) break;
    }
    components.push(component.sort((a, b) => order.get(a)! - order.get(b)!));
  };
  for (const id of successors.keys()) if (!index.has(id)) visit(id);
  return components.sort((a, b) => order.get(a[0]!)! - order.get(b[0]!)!);
}
