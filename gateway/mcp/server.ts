// POST /mcp: the MCP tool server (streamable HTTP, stateless: one server and transport per
// request), a second transport over the REST route table. A tool call is served by serveRoute, the
// same function REST runs: same validation, route auth, prices, paywall and ledger. x402 rides in
// the MCP transport binding (x402 specs/transports-v2/mcp.md): the payment arrives in
// params._meta["x402/payment"] and goes to the paywall as the PAYMENT-SIGNATURE it encodes; a
// payment-required answer is a tool result with isError and the PaymentRequired in
// structuredContent and content[0].text, or, when the request advertises the `org.x402/payment`
// extension, a `payment_required` result; the settlement rides in result._meta["x402/payment-response"].
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolRequest,
} from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import type { Request, RequestHandler, Response } from 'express';
import { newCorrelationId } from '../../core/canon/ids';
import { AppError, errorBody } from '../../core/errors';
import type { Logger } from '../../platform/log';
import { type RestRouterDeps, serveRoute } from '../rest/router';
import type { RestResult } from '../rest/types';
import { PAYMENT_REQUIRED_HEADER, PAYMENT_RESPONSE_HEADER } from '../x402/protocol';
import { buildTools, type Tool } from './tools';

export const X402_PAYMENT_META = 'x402/payment';
export const X402_PAYMENT_RESPONSE_META = 'x402/payment-response';
export const X402_MCP_EXTENSION = 'org.x402/payment';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

type ToolAnswer = Record<string, unknown>;

function textOf(value: unknown): [{ type: 'text'; text: string }] {
  return [{ type: 'text', text: JSON.stringify(value) }];
}

/** Whether the request advertises the `org.x402/payment` extension in its per-request capabilities. */
function advertisesExtension(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META] as
    { extensions?: Record<string, unknown> } | undefined;
  return Boolean(capabilities?.extensions && X402_MCP_EXTENSION in capabilities.extensions);
}

/** The route call's arguments: path parameters by name, the rest as body (POST) or query (GET). */
function callOf(tool: Tool, args: Record<string, unknown>) {
  const params: Record<string, string> = {};
  const rest: Record<string, unknown> = { ...args };
  for (const name of tool.pathParams) {
    const value = args[name];
    if (typeof value !== 'string' || value === '')
      throw new AppError('REQUEST_INVALID', `The tool ${tool.name} needs ${name}.`, [
        { field: name, reason: 'required string' },
      ]);
    params[name] = value;
    delete rest[name];
  }
  const path = tool.route.path.replace(/:([A-Za-z]+)/g, (_match, name: string) =>
    encodeURIComponent(params[name]!),
  );
  if (tool.route.method === 'GET') {
    const query: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) {
      if (typeof value !== 'string')
        throw new AppError('REQUEST_INVALID', `${name} must be a string.`, [
          { field: name, reason: 'must be a string' },
        ]);
      query[name] = value;
    }
    return { path, params, query, body: undefined };
  }
  return { path, params, query: {}, body: rest };
}

/** The REST answer as a tool result: the body as structuredContent and JSON text. */
function toolAnswer(result: RestResult, extension: boolean): ToolAnswer {
  const headers = result.headers ?? {};
  const required = headers[PAYMENT_REQUIRED_HEADER];
  if (result.status === 402 && required) {
    const paymentRequired = decodePaymentRequiredHeader(required);
    if (extension) return { resultType: 'payment_required', paymentRequired };
    return {
      isError: true,
      structuredContent: paymentRequired,
      content: textOf(paymentRequired),
    };
  }
  const receipt = headers[PAYMENT_RESPONSE_HEADER];
  const body =
    typeof result.body === 'object' && result.body !== null ? result.body : { value: result.body };
  return {
    ...(result.status >= 400 ? { isError: true } : {}),
    structuredContent: body,
    content: textOf(body),
    ...(receipt
      ? { _meta: { [X402_PAYMENT_RESPONSE_META]: decodePaymentResponseHeader(receipt) } }
      : {}),
  };
}

export interface McpServerDeps {
  readonly router: RestRouterDeps;
  readonly serviceName: string;
  readonly version: string;
  readonly log: Logger;
}

export function mcpTools(deps: McpServerDeps): Tool[] {
  return buildTools(deps.router.routes, deps.router.service.payment.assetDecimals);
}

/** One request's MCP server: its tools call serveRoute as this HTTP request's caller. */
function serverFor(
  req: Request,
  correlationId: string,
  tools: readonly Tool[],
  deps: McpServerDeps,
) {
  const server = new Server(
    { name: deps.serviceName, version: deps.version },
    { capabilities: { tools: {}, experimental: { [X402_MCP_EXTENSION]: {} } } },
  );
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request: CallToolRequest) => {
    const { name, arguments: args, _meta: meta } = request.params;
    const tool = byName.get(name);
    const docsBaseUrl = deps.router.service.docsBaseUrl;
    const refusal = (error: AppError): ToolAnswer => {
      const body = errorBody(error.code, {
        message: error.message,
        details: error.details,
        correlationId,
        docsBaseUrl,
      });
      return { isError: true, structuredContent: body, content: textOf(body) };
    };
    if (!tool) return refusal(new AppError('ROUTE_NOT_FOUND', `No tool ${name}.`));
    const payment = (meta as Record<string, unknown> | undefined)?.[X402_PAYMENT_META];
    try {
      const call = callOf(tool, (args ?? {}) as Record<string, unknown>);
      const result = await serveRoute(
        tool.route,
        {
          ...call,
          authorization: req.headers.authorization,
          paymentHeader:
            payment && typeof payment === 'object'
              ? encodePaymentSignatureHeader(payment as PaymentPayload)
              : null,
          correlationId,
        },
        deps.router,
      );
      return toolAnswer(result, advertisesExtension(meta as Record<string, unknown> | undefined));
    } catch (error) {
      if (error instanceof AppError && error.code !== 'INTERNAL_ERROR') return refusal(error);
      deps.log.error({ correlationId, err: error, tool: name }, 'MCP tool call failed');
      return refusal(new AppError('INTERNAL_ERROR'));
    }
  });
  return server;
}

/** The POST /mcp handler (JSON body already parsed). Stateless: nothing outlives the request. */
export function mcpHandler(deps: McpServerDeps): RequestHandler {
  const tools = mcpTools(deps);
  return async (req: Request, res: Response, next) => {
    const correlationId = String(res.locals.correlationId ?? newCorrelationId());
    const server = serverFor(req, correlationId, tools, deps);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      next(error);
    }
  };
}
