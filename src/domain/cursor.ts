import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';

/** Where a keyset page ends: the sort key of its last item. */
export type Position = string[];

/**
 * What a cursor is bound to besides its position: the organization, the list
 * (`list`) and the filters it was issued for. None of it is in the cursor;
 * all of it is in the signature, so a cursor presented with another
 * organization, list or filters fails the check as if it were forged.
 */
export interface CursorScope {
  orgId: string;
  list: string;
  filters: Record<string, string | undefined>;
}

const INVALID = 'cursor was not issued for this query (same organization and filters); start again without it';

/** Issues and reads opaque, HMAC-signed keyset cursors: `<base64url JSON position>.<base64url HMAC-SHA256>`. */
export class CursorCodec {
  private secret: Promise<Buffer> | undefined;

  /** `loadSecret` is called once, on first use. */
  constructor(private readonly loadSecret: () => Promise<Buffer>) {}

  /** The position after which a list resumes: none without a cursor; a two-key position read from one. */
  async after(scope: CursorScope, cursor: string | undefined): Promise<[string, string] | undefined> {
    if (cursor === undefined) return undefined;
    const [a, b] = await this.read(scope, cursor, 2);
    return [a as string, b as string];
  }

  /** A page of `limit` items from `limit + 1` fetched, and the cursor after it (null on the last page). */
  async page<T, R>(
    scope: CursorScope,
    fetched: T[],
    limit: number,
    keyOf: (item: T) => Position,
    render: (item: T) => R,
  ): Promise<{ items: R[]; nextCursor: string | null }> {
    const items = fetched.slice(0, limit);
    const last = items.at(-1);
    const nextCursor = fetched.length > limit && last ? await this.issue(scope, keyOf(last)) : null;
    return { items: items.map(render), nextCursor };
  }

  async issue(scope: CursorScope, position: Position): Promise<string> {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${(await this.sign(scope, payload)).toString('base64url')}`;
  }

  /** The position `cursor` holds, or 400 invalid_query naming `cursor`. `size` is the number of keys the list sorts by. */
  async read(scope: CursorScope, cursor: string, size: number): Promise<Position> {
    const [payload, signature, ...rest] = cursor.split('.');
    if (!payload || !signature || rest.length > 0) throw new ApiError('invalid_query', INVALID);
    const expected = await this.sign(scope, payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ApiError('invalid_query', INVALID);
    const position: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    // Signed by us, so well-formed; checked anyway so that a leaked secret cannot make a 500.
    if (!Array.isArray(position) || position.length !== size || !position.every((p) => typeof p === 'string')) {
      throw new ApiError('invalid_query', INVALID);
    }
    return position as Position;
  }

  private async sign(scope: CursorScope, payload: string): Promise<Buffer> {
    // A failed load (the database away) is not kept: the next request tries again.
    this.secret ??= this.loadSecret().catch((err: unknown) => {
      this.secret = undefined;
      throw err;
    });
    const filters = Object.keys(scope.filters)
      .sort()
      .filter((k) => scope.filters[k] !== undefined)
      .map((k) => [k, scope.filters[k]]);
    return createHmac('sha256', await this.secret)
      .update(JSON.stringify([scope.orgId, scope.list, filters, payload]))
      .digest();
  }
}
