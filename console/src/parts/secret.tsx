/**
 * A secret shown once (a client secret, an API key, recovery codes): its
 * text, a copy button, and the warning that it is not shown again.
 */
import { useState } from 'preact/hooks';

export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong> — copy it now: it is not shown again.
      </p>
      <code data-secret>{value}</code>
      <button type="button" class="secondary" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
