/** Runs a CLI function in-process and returns what it printed as JSON (stdout is restored after). */
export async function printedJson(work: () => Promise<void>): Promise<unknown> {
  const printed: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => (printed.push(String(chunk)), true)) as never;
  try {
    await work();
  } finally {
    process.stdout.write = write;
  }
  return JSON.parse(printed.join(''));
}
