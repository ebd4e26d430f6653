import { clearSessionCookie, setSessionCookie } from '../../http/console-session';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';

export function createSession(services: Services): OperationHandler<'createSession'> {
  return async (req, res) => {
    // Behind a trusted proxy (Express's trust proxy setting), req.ip is the client's address rather than the proxy's.
    const { token, session } = await services.sessions.signIn(req.body, req.ip ?? req.socket.remoteAddress ?? 'unknown');
    setSessionCookie(req, res, token);
    sendJson(res, 200, session);
  };
}

export function getMe(services: Services): OperationHandler<'getMe'> {
  return async (req, res) => {
    sendJson(res, 200, await services.sessions.describe(req.member, req.csrfToken));
  };
}

export function deleteSession(services: Services): OperationHandler<'deleteSession'> {
  return async (req, res) => {
    await services.sessions.signOut(req.member.sessionId);
    clearSessionCookie(req, res);
    res.status(204).end();
  };
}

export function getInvite(services: Services): OperationHandler<'getInvite'> {
  return async (req, res) => {
    sendJson(res, 200, await services.sessions.invite(req.get('x-invite-token') ?? ''));
  };
}

export function acceptInvite(services: Services): OperationHandler<'acceptInvite'> {
  return async (req, res) => {
    const { token, session } = await services.sessions.acceptInvite(req.body.token, req.body.password);
    setSessionCookie(req, res, token);
    sendJson(res, 200, session);
  };
}
