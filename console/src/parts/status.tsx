/** Loading, failure and empty states, said the same way on every page. */
import type { ComponentChildren } from 'preact';
import { problemOf } from '../messages';

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" class="muted">
      Loading {what}…
    </p>
  );
}

/** An error as a sentence saying what to do, the API's own words below it. */
export function Failure({ error }: { error: unknown }) {
  const problem = problemOf(error);
  return (
    <div role="alert" class="alert">
      <p>{problem.sentence}</p>
      {problem.detail === undefined ? null : <p class="detail">{problem.detail}</p>}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** What an action just did, announced to screen readers. */
export function Done({ children }: { children: ComponentChildren }) {
  return (
    <div role="status" class="done">
      {children}
    </div>
  );
}
