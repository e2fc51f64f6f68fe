/**
 * The account's authenticator app (TOTP; `/1/users/current/mfa/totp`):
 * whether it is on; set it up — the key to type in (grouped by four) and the
 * `otpauth://` link, confirmed with a code of it — then the ten recovery
 * codes, shown once; remove it with a current code (`X-OTP`).
 */
import { useState } from 'preact/hooks';
import { call } from '../api';
import { loadMe } from '../me';
import { useAction } from '../parts/action';
import { Confirm } from '../parts/confirm';
import { useLoad } from '../parts/load';
import { ShownOnce } from '../parts/secret';
import { Done, Failure, Loading } from '../parts/status';

const TOTP = '/1/users/current/mfa/totp';

interface Enrolment {
  secret: string;
  otpauth_uri: string;
}

/** A base32 key in groups of four, as people type it. */
const grouped = (secret: string) => (secret.match(/.{1,4}/g) ?? []).join(' ');

const codeOf = (event: SubmitEvent) => {
  event.preventDefault();
  return String(new FormData(event.currentTarget as HTMLFormElement).get('code') ?? '').trim();
};

export function TotpSection() {
  const [me, again] = useLoad(loadMe, []);
  const { run, error, done } = useAction(again);
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>(undefined);
  const [codes, setCodes] = useState<string[] | undefined>(undefined);
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const begin = () =>
    run(async () => {
      setCodes(undefined);
      setEnrolment(await call<Enrolment>('POST', TOTP));
      return 'Add the key to your authenticator app, then enter the code it shows.';
    });
  const confirm = (code: string) =>
    run(async () => {
      const answer = await call<{ recovery_codes: string[] }>('POST', `${TOTP}/confirm`, {
        // "123 456", as some apps show it, is the code 123456.
        body: { code: code.replace(/\s/g, '') },
      });
      setEnrolment(undefined);
      setCodes(answer.recovery_codes);
      return 'Your authenticator app is on: signing in now asks for its code.';
    });
  const remove = (code: string) =>
    run(async () => {
      setRemoving(undefined);
      await call('DELETE', TOTP, { headers: { 'x-otp': code } });
      setCodes(undefined);
      return 'Your authenticator app is removed: signing in asks for your password alone.';
    });
  const totp = me.state === 'ready' ? me.value.second_factors.totp : undefined;
  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Authenticator app</h2>
      {me.state === 'loading' ? <Loading what="your second factors" /> : null}
      {me.state === 'failed' ? <Failure error={me.error} /> : null}
      {done === undefined ? null : <Done>{done}</Done>}
      {error === undefined ? null : <Failure error={error} />}
      {codes === undefined ? null : (
        <ShownOnce label="Your recovery codes" value={codes.join('\n')} />
      )}
      {totp === undefined || totp === null ? null : totp.enrolled ? (
        <TotpOn codesLeft={totp.recovery_codes_left} onRemove={setRemoving} />
      ) : enrolment === undefined ? (
        <TotpOff onBegin={() => void begin()} />
      ) : (
        <TotpPending enrolment={enrolment} onConfirm={(code) => void confirm(code)} />
      )}
      {removing === undefined ? null : (
        <Confirm
          title="Remove your authenticator app?"
          body="Signing in then asks for your password alone, and your recovery codes stop working."
          action="Remove authenticator app"
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </section>
  );
}

function TotpOff({ onBegin }: { onBegin: () => void }) {
  return (
    <>
      <p>
        <strong>Off.</strong> With an authenticator app, signing in with your password also asks for
        the six-digit code the app shows.
      </p>
      <button type="button" onClick={onBegin}>
        Set up an authenticator app
      </button>
    </>
  );
}

function TotpPending({
  enrolment,
  onConfirm,
}: {
  enrolment: Enrolment;
  onConfirm: (code: string) => void;
}) {
  return (
    <>
      <p>In your authenticator app, add an account by this key (time-based, six digits):</p>
      <dl>
        <dt>Key</dt>
        <dd>
          <code data-totp-key>{grouped(enrolment.secret)}</code>
        </dd>
        <dt>Or this link</dt>
        <dd>
          <a href={enrolment.otpauth_uri}>
            <code>{enrolment.otpauth_uri}</code>
          </a>
        </dd>
      </dl>
      <form onSubmit={(event) => onConfirm(codeOf(event))}>
        <label for="totp-confirm-code">The code your app shows now</label>
        <input
          id="totp-confirm-code"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9 ]{6,7}"
          required
        />
        <button type="submit">Turn on</button>
      </form>
    </>
  );
}

function TotpOn({
  codesLeft,
  onRemove,
}: {
  codesLeft: number | null;
  onRemove: (code: string) => void;
}) {
  return (
    <>
      <p>
        <strong>On.</strong> Signing in with your password also asks for your app's code.
        {codesLeft === null ? '' : ` ${codesLeft} recovery codes left.`}
      </p>
      <form onSubmit={(event) => onRemove(codeOf(event))}>
        <label for="totp-remove-code">A current code from your app, or a recovery code</label>
        <input id="totp-remove-code" name="code" autoComplete="one-time-code" required />
        <button type="submit" class="danger">
          Remove authenticator app
        </button>
      </form>
    </>
  );
}
