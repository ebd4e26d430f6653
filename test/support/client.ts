import type { Express } from 'express';
import request, { type Response } from 'supertest';
import { assertContract } from './contract';

export interface CallOptions {
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** supertest with the contract check applied to every response; `defaultHeaders` go with every request (a call's own win). */
export function client(app: Express, defaultHeaders: Record<string, string> = {}) {
  const call = async (method: 'get' | 'post' | 'put' | 'delete' | 'patch', path: string, options: CallOptions = {}): Promise<Response> => {
    let test = request(app)[method](path);
    if (options.key) test = test.set('Authorization', `Bearer ${options.key}`);
    for (const [name, value] of Object.entries({ ...defaultHeaders, ...options.headers })) test = test.set(name, value);
    if (options.body !== undefined) test = test.send(options.body as object);
    const res = await test;
    assertContract(res);
    return res;
  };
  return {
    get: (path: string, options?: CallOptions) => call('get', path, options),
    post: (path: string, options?: CallOptions) => call('post', path, options),
    put: (path: string, options?: CallOptions) => call('put', path, options),
    delete: (path: string, options?: CallOptions) => call('delete', path, options),
    patch: (path: string, options?: CallOptions) => call('patch', path, options),
  };
}
