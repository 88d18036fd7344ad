// Small shared pieces: a time in the viewer's zone with UTC on hover, a status line for loading,
// empty and error states written for people.
import type { ComponentChildren } from 'preact';
import { localTime } from './format';

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={`${new Date(iso).toISOString()} (UTC)`}>
      {localTime(iso)}
    </time>
  );
}

export function Problem({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" class="problem">
      Something went wrong: {message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}
