import { expect } from 'vitest';

/** Asserts the JSON error of DESIGN §1: status, CODE, a description, a request id. */
export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ error: string; error_description: string }> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  const body = JSON.parse(text) as { error: string; error_description: string };
  expect(body.error).toBe(code);
  expect(typeof body.error_description).toBe('string');
  expect(body.error_description.length).toBeGreaterThan(0);
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/); // never a stack trace
  // One line, ended: curl leaves the prompt on a line of its own.
  expect(text.endsWith('}\n')).toBe(true);
  expect(text.indexOf('\n')).toBe(text.length - 1);
  return body;
}

export function expectBasicChallenge(res: Response): void {
  expect(res.headers.get('www-authenticate')).toBe('Basic realm="tenant-gateway"');
}

/** A bearer token was sent and failed: the challenge names the error (RFC 6750 §3.1). */
export function expectBearerChallenge(res: Response): void {
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
}

/**
 * No bearer credentials at all (no Authorization header, or another scheme):
 * the challenge names the realm and no error code (RFC 6750 §3.1).
 */
export const NO_CREDENTIALS_CHALLENGE = 'Bearer realm="tenant-gateway"';

export function expectNoCredentialsChallenge(res: Response): void {
  expect(res.headers.get('www-authenticate')).toBe(NO_CREDENTIALS_CHALLENGE);
}

/** The error `code` `fn` throws (`'no code'` for an error without one), or undefined when it returns. */
export function codeThrownBy(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code ?? 'no code';
  }
  return undefined;
}
