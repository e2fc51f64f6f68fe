/**
 * The console's one way to the gateway: the public identity API, with the
 * session cookie (same origin). An error answer becomes an {@link ApiError}
 * carrying the API's stable CODE; `messages.ts` says it as a sentence.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

/** Calls `method path`; the parsed JSON answer, or undefined for 204. */
export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch {
    throw new ApiError(0, 'network', 'The gateway could not be reached.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = parsed as { error?: unknown; error_description?: unknown } | undefined;
    throw new ApiError(
      response.status,
      typeof error?.error === 'string' ? error.error : 'unexpected',
      typeof error?.error_description === 'string' ? error.error_description : response.statusText,
    );
  }
  return parsed as T;
}

export const get = <T>(path: string) => call<T>('GET', path);

/** A path segment, escaped. */
export const seg = (value: string) => encodeURIComponent(value);
