/**
 * The sign-in page's one script (issue 45), served by the gateway as a
 * static file (the page's CSP gains `script-src 'self'` and
 * `connect-src 'self'` where passkeys are on; nothing inline). It shows the
 * "Sign in with a passkey" form only where the browser has WebAuthn; on its
 * submit it asks for the request options (`POST /1/sign-in/passkey/options`
 * with the form token), lets the browser offer the passkeys it holds for the
 * rpId (`navigator.credentials.get`), and posts the answer as the form's
 * `credential` field — a plain form post, so the tenant step, the session,
 * the refusals are the password sign-in's. Without script the page works as
 * before: the password form. Its name carries its digest: cached a year,
 * a new version is a new name.
 */
import { createHash } from 'node:crypto';

const JS = `(function () {
  'use strict';
  var form = document.getElementById('passkey-form');
  if (!form || !window.PublicKeyCredential || !navigator.credentials) return;
  var status = document.getElementById('passkey-status');
  form.hidden = false;
  function text(buffer) {
    var bytes = new Uint8Array(buffer), s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  }
  function bytes(value) {
    var s = value.replace(/-/g, '+').replace(/_/g, '/');
    while (s.length % 4) s += '=';
    var raw = atob(s), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out.buffer;
  }
  function say(message) {
    status.textContent = message;
    status.hidden = false;
    status.focus();
  }
  function answer(credential) {
    var r = credential.response;
    return JSON.stringify({
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: text(r.clientDataJSON),
        authenticatorData: text(r.authenticatorData),
        signature: text(r.signature),
        userHandle: r.userHandle ? text(r.userHandle) : undefined
      }
    });
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    status.hidden = true;
    fetch(form.getAttribute('data-options'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ csrf_token: form.elements.csrf_token.value })
    })
      .then(function (res) {
        if (!res.ok) throw new Error('options ' + res.status);
        return res.json();
      })
      .then(function (options) {
        return navigator.credentials.get({
          publicKey: {
            challenge: bytes(options.challenge),
            rpId: options.rpId,
            timeout: options.timeout,
            userVerification: options.userVerification,
            allowCredentials: []
          }
        });
      })
      .then(function (credential) {
        if (!credential) throw new Error('no passkey');
        form.elements.credential.value = answer(credential);
        form.submit();
      })
      .catch(function () {
        say('No passkey was used. Try again, or sign in with your password.');
      });
  });
})();
`;

/** The script's bytes. */
export const PASSKEY_SCRIPT = Buffer.from(JS, 'utf8');

const DIGEST = createHash('sha256').update(PASSKEY_SCRIPT).digest('base64url').slice(0, 16);

/** Its path under `/1` (the router's prefix): the digest in the name. */
export const PASSKEY_SCRIPT_ROUTE = `/sign-in/passkey.${DIGEST}.js`;

/** Its path as the page loads it. */
export const PASSKEY_SCRIPT_PATH = `/1${PASSKEY_SCRIPT_ROUTE}`;

/** Its ETag: the same digest. */
export const PASSKEY_SCRIPT_ETAG = `"${DIGEST}"`;
