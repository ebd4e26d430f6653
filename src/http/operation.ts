import type { Request, RequestHandler, Response, Router } from 'express';
import type { OpenApiDocument } from '../contract/document-source';
import type { Body, OperationId, PathParams, Query } from '../contract/types';
import type { MemberRole } from '../data/schema';
import { requireRole } from './console-session';

/**
 * A request that reached an operation's handler: the contract middleware has
 * checked its parameters and body against that operation (for operations with
 * `x-item-validation`, only the envelope: the domain judges each item).
 */
export type OperationRequest<Op extends OperationId> = Request<PathParams<Op>, unknown, Body<Op>, Query<Op>>;

/** Every handler has this shape, and is named after the operationId it serves. */
export type OperationHandler<Op extends OperationId> = (req: OperationRequest<Op>, res: Response) => Promise<void> | void;

/** One handler per operation of the contract: the compiler refuses a contract operation without one. */
export type Handlers = { [Op in OperationId]: OperationHandler<Op> };

const methods = ['get', 'put', 'post', 'patch', 'delete'] as const;
type Method = (typeof methods)[number];

const memberRoles: readonly MemberRole[] = ['owner', 'admin', 'member'];

/**
 * Mounts each handler at the path and method the contract gives its
 * operationId, behind the role check its `x-roles` asks for.
 */
export function mountOperations(router: Router, doc: OpenApiDocument, handlers: Handlers): void {
  for (const [path, pathItem] of Object.entries<OpenApiDocument>(doc.paths)) {
    for (const method of methods) {
      const operation: OpenApiDocument | undefined = pathItem[method];
      const operationId: unknown = operation?.operationId;
      if (operationId === undefined) continue;
      if (!isOperationId(operationId, handlers)) throw new Error(`openapi/v1.yaml: operation ${String(operationId)} has no handler`);
      const guards = operation?.['x-roles'] === undefined ? [] : [requireRole(rolesOf(operationId, operation['x-roles']))];
      mount(router, method, expressPath(path), guards, handlers, operationId);
    }
  }
}

// Generic in the operation, so that the handler's request type is that operation's (not a union of all).
function mount<Op extends OperationId>(
  router: Router,
  method: Method,
  path: string,
  guards: RequestHandler[],
  handlers: Handlers,
  operationId: Op,
): void {
  const handler: OperationHandler<Op> = handlers[operationId];
  // The guards go first, as a route of their own on the same path: they call next() into the handler.
  if (guards.length > 0) router[method](path, ...guards);
  router[method]<string, PathParams<Op>, unknown, Body<Op>, Query<Op>>(path, handler);
}

function rolesOf(operationId: string, declared: unknown): MemberRole[] {
  const valid = Array.isArray(declared) && declared.length > 0 && declared.every((r) => memberRoles.includes(r));
  if (!valid) throw new Error(`openapi/v1.yaml: x-roles of ${operationId} must be a non-empty list of ${memberRoles.join(', ')}`);
  return declared;
}

function isOperationId(id: unknown, handlers: Handlers): id is OperationId {
  return typeof id === 'string' && Object.hasOwn(handlers, id);
}

/** `/workers/{workerId}` in the contract is `/workers/:workerId` to Express. */
function expressPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}
