/**
 * Value types more than one section uses: numbers and booleans that may come
 * from `${ENV}` as strings, ports, host names, URLs, header names. A value
 * type one section alone uses lives beside that section.
 */
import { z } from 'zod';

/** Accepts numbers, and strings of digits (values that came from `${ENV}`). */
export const integer = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
    z.number().int().min(min).max(max),
  );

/** Accepts numbers, and strings of a decimal number (values that came from `${ENV}`). */
export const decimal = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v),
    z.number().min(min).max(max),
  );

/** Accepts booleans, and the strings `true` and `false` (values that came from `${ENV}`). */
export const boolean = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

/** A TCP port; 0 asks for any free one. */
export const port = () => integer(0, 65535);

/** An address a listener binds to, or a host an upstream runs on. */
export const hostName = () => z.string().min(1, 'must not be empty');

/** An absolute `http:` or `https:` URL with a host. */
export const httpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL')
  .meta({ typeName: 'http(s) URL' });

/** An HTTP header name (RFC 9110 token). */
export const headerName = z
  .string()
  .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'must be an HTTP header name')
  .meta({ typeName: 'HTTP header name' });
