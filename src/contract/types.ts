import type { components, operations } from '../../generated/openapi';

/** Types of the contract, by the names openapi/v1.yaml gives them: the only way code names a contract type. */
export type SchemaName = keyof components['schemas'];
export type Schema<N extends SchemaName> = components['schemas'][N];

export type OperationId = keyof operations;
type Operation<Op extends OperationId> = operations[Op];

type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;
// An operation without query or path parameters declares them as `never`; Express still gives an empty object.
type OrEmpty<T> = [T] extends [never] ? Record<string, never> : T extends undefined ? Record<string, never> : T;

/** The JSON request body of an operation. */
export type Body<Op extends OperationId> = JsonContent<NonNullable<Operation<Op>['requestBody']>>;
/** The query parameters of an operation, as validated by the contract middleware. */
export type Query<Op extends OperationId> = OrEmpty<NonNullable<Operation<Op>['parameters']['query']>>;
/** The path parameters of an operation. */
export type PathParams<Op extends OperationId> = OrEmpty<NonNullable<Operation<Op>['parameters']['path']>>;
/** The JSON body of one of an operation's responses. */
export type Reply<Op extends OperationId, Status extends keyof Operation<Op>['responses']> = JsonContent<
  Operation<Op>['responses'][Status]
>;
