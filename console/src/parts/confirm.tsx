/**
 * "Are you sure?" before anything is removed: a modal `<dialog>` (focus kept
 * inside, Escape cancels), the action named in its button.
 */
import { useEffect, useRef } from 'preact/hooks';

export interface ConfirmProps {
  title: string;
  body: string;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
}

export function Confirm({ title, body, action, onConfirm, onCancel }: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby="confirm-title" onCancel={onCancel}>
      <h2 id="confirm-title">{title}</h2>
      <p>{body}</p>
      <div class="actions">
        <button type="button" class="danger" onClick={onConfirm}>
          {action}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
