import { useState } from 'react';

/** Copies a secret or link to the clipboard and says so (to screen readers too). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      <button
        type="button"
        className="button button--secondary"
        onClick={() =>
          void navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {label}
      </button>
      <span role="status" className="copy-status">
        {copied ? 'Copied' : ''}
      </span>
    </>
  );
}
