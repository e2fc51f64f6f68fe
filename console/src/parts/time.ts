/** Unix seconds as people read them (the browser's locale and time zone). */
export function when(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return new Date(seconds * 1000).toLocaleString();
}
