const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Values of the samples of `name` in Prometheus text whose labels include the given ones. */
export function metricSamples(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number[] {
  const values: number[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = SAMPLE.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(LABEL)) found[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) values.push(Number(m[3]));
  }
  return values;
}
