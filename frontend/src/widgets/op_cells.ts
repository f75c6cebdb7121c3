/**
 * An alert row's op name and op type cells. The type shows once (no "Log Log" where a graph op is named after its
 * type, or where an eager op has no name and its type stands for it), and the type column is never left blank: an
 * eager op's name cell says "eager"; a graph op named after its type spans both cells.
 */
export interface OpCells {
  /** The name cell's text. */
  name: string;
  /** The type cell's text; null where the name cell spans the type column (the name is the type). */
  type: string | null;
  /** True where the name cell says "eager" (muted: not a name). */
  eager: boolean;
}

export function opCells(op: { op_name: string | null; op_type: string }): OpCells {
  if (!op.op_name) return { name: 'eager', type: op.op_type, eager: true };
  if (op.op_name === op.op_type) return { name: op.op_name, type: null, eager: false };
  return { name: op.op_name, type: op.op_type, eager: false };
}
