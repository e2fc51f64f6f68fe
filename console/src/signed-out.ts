/** The session ended (signed out elsewhere, timed out, revoked): to the sign-in page, back here after. */
export function signInAgain(): void {
  location.assign(`/1/sign-in?return_to=${encodeURIComponent(location.pathname)}`);
}
