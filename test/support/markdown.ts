/** Reading the repository's Markdown pages the way the docs tests check them. */

/** The text from a `## ` heading to the next one. */
export function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The fenced code blocks of one language (or of any, with `\\w*`), in order. */
export function blocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map(
    (m) => m[1] as string,
  );
}
