import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../data/db';
import { ApiError, type ErrorCode } from '../errors';
import { errorDetailFor, sendReply } from './respond';

interface ValidatorIssue {
  path?: string;
  message?: string;
}

/** Turns anything thrown on the way into the contract's error body; unknown failures become internal_error. */
export function errorHandler(logger: Logger) {
  // Express recognises error handlers by their four parameters.
  return async (err: unknown, req: Request, res: Response, _next: NextFunction): Promise<void> => {
    const error = toApiError(err);
    if (error.code === 'internal_error' || error.code === 'service_unavailable') {
      logger.error({ err, requestId: req.requestId }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = JSON.stringify({ error: errorDetailFor(req, error.code, error.message) });
    try {
      // Before answering: a retry with the same Idempotency-Key must find this answer stored (or the key free).
      await req.idempotency?.settle({ status: error.status, code: error.code, body, requestId: req.requestId });
    } catch (settleError) {
      logger.error({ err: settleError, requestId: req.requestId }, 'could not settle the Idempotency-Key');
    }
    res.set(error.headers);
    sendReply(res, { status: error.status, body });
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isDatabaseUnavailable(err))
    return new ApiError('service_unavailable', 'The database is unreachable; nothing was changed. Retry later.', { 'Retry-After': '1' });
  const e = err as { status?: number; errors?: ValidatorIssue[]; headers?: { Allow?: string } };
  const byStatus: Record<number, ErrorCode> = {
    400: 'invalid_body',
    404: 'not_found',
    405: 'method_not_allowed',
    413: 'batch_too_large',
    415: 'unsupported_media_type',
  };
  const code = e?.status ? byStatus[e.status] : undefined;
  if (!code) return new ApiError('internal_error');
  // A 405 says which methods the path has (RFC 9110, 15.5.6): the validator lists them.
  if (code === 'method_not_allowed' && e.headers?.Allow) return new ApiError(code, undefined, { Allow: e.headers.Allow });
  const parameterIssues = e.errors?.filter((i) => PARAMETER.test(i.path ?? '')) ?? [];
  if (code === 'invalid_body' && parameterIssues.length) {
    return new ApiError('invalid_query', parameterIssues.slice(0, 3).map(describeParameterIssue).join('; '));
  }
  if (code === 'invalid_body' && e.errors?.length) {
    const issues = e.errors.slice(0, 3).map((i) => `${(i.path ?? '').replace(/^\/body/, '')} ${i.message ?? ''}`.trim());
    return new ApiError(code, issues.join('; '));
  }
  return new ApiError(code);
}

/** Where express-openapi-validator reports a query or path parameter: `/query/<name>` or `/params/<name>`. */
const PARAMETER = /^\/(query|params)\/([^/]+)/;

/** The issue with the parameter named, e.g. `query parameter limit must be <= 200`. */
function describeParameterIssue(issue: ValidatorIssue): string {
  const [, where, name] = PARAMETER.exec(issue.path ?? '') as RegExpExecArray;
  const message = issue.message ?? 'is not valid';
  return message.includes(`'${name}'`) || message.includes(`"${name}"`)
    ? message
    : `${where === 'query' ? 'query' : 'path'} parameter ${name} ${message}`;
}
