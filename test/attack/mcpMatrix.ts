// The MCP transport of the authorization matrix: every MCP tool is its REST route served over
// POST /mcp (gateway/mcp/tools.ts), so its row is the route's row (one table, two transports) and
// its invocation is the route's request turned into tool arguments: path parameters by name, the
// query string's and the body's fields as they are. A tool whose route has no row has no row.
import { TOOL_BINDINGS, type ToolBinding } from '../../gateway/mcp/tools';
import type { ActorName, Row } from './authorization-matrix';
import { MATRIX } from './authorization-matrix';
import type { MatrixWorld } from './matrixWorld';
import { type Build, type Invocation, OPERATIONS } from './operations';

/** The matrix's name of a tool's operation. */
export function mcpOperation(tool: ToolBinding): string {
  return `MCP ${tool.name}`;
}

/** The REST row a tool's operation takes its verdicts from. */
export function routeOfTool(tool: ToolBinding): string {
  return `${tool.method} ${tool.path}`;
}

/** Every tool's row, the one of its route (undefined when the route has none: the test fails). */
export const MCP_MATRIX: Readonly<Record<string, Row | undefined>> = Object.fromEntries(
  TOOL_BINDINGS.map((tool) => [mcpOperation(tool), MATRIX[routeOfTool(tool)]]),
);

/** A REST request of the route as the tool's arguments. */
function argumentsOf(
  tool: ToolBinding,
  request: Extract<Invocation, { kind: 'rest' }>,
): Record<string, unknown> {
  const [pathname, search = ''] = request.path.split('?');
  const template = tool.path.split('/');
  const segments = pathname!.split('/');
  const args: Record<string, unknown> = Object.fromEntries(new URLSearchParams(search));
  template.forEach((part, index) => {
    if (part.startsWith(':')) args[part.slice(1)] = decodeURIComponent(segments[index]!);
  });
  if (request.body && typeof request.body === 'object') Object.assign(args, request.body);
  return args;
}

/** The tool call and the REST request it mirrors, built for one actor. */
export async function mcpInvocations(
  tool: ToolBinding,
  world: MatrixWorld,
  actor: ActorName,
): Promise<{ rest: Invocation; mcp: Invocation }> {
  const build: Build | undefined = OPERATIONS[routeOfTool(tool)];
  if (!build) throw new Error(`no invocation for ${routeOfTool(tool)}`);
  const rest = await build(world, actor);
  if (rest.kind !== 'rest') throw new Error(`${routeOfTool(tool)} is not a REST invocation`);
  return { rest, mcp: { kind: 'mcp', tool: tool.name, arguments: argumentsOf(tool, rest) } };
}
