import type { ReactNode } from 'react';
import { ApiFailure } from '../api/client';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state state--loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

/** A failed request, said plainly, with a way to try again. */
export function ErrorState({ error, retry, what }: { error: unknown; retry?: () => void; what: string }) {
  const message = error instanceof ApiFailure ? error.message : 'The service could not be reached.';
  return (
    <div className="state state--error" role="alert">
      <p>
        Could not load {what}: {message}
      </p>
      {retry && (
        <button type="button" className="button button--secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state--empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** The message of a failed change, for a form's alert. */
export function failureMessage(error: unknown): string {
  return error instanceof ApiFailure ? error.message : 'The service could not be reached. Try again.';
}

/** A form's problem as an alert; nothing when there is none. */
export function FormProblem({ problem, className }: { problem: string | false | undefined; className?: string }) {
  if (!problem) return null;
  return (
    <p className={className ? `form-error ${className}` : 'form-error'} role="alert">
      {problem}
    </p>
  );
}

/** Why a request failed, as an alert; nothing when it did not. */
export function RequestFailure({ failure }: { failure: unknown }) {
  return <FormProblem problem={failure !== null && failure !== undefined && failureMessage(failure)} />;
}

/** What became of a form's change: its failure as an alert, or `saved` once it is done. */
export function SaveOutcome({
  mutation,
  saved = 'Saved.',
}: {
  mutation: { isError: boolean; isSuccess: boolean; error: unknown };
  saved?: string;
}) {
  if (mutation.isError) return <RequestFailure failure={mutation.error} />;
  return mutation.isSuccess ? <p role="status">{saved}</p> : null;
}
