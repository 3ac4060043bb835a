/** What Python's prometheus_client (vLLM's and SGLang's exporter) sends as Content-Type. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
}

/**
 * Writes the Prometheus text format byte for byte as Python's prometheus_client does, so a
 * parser tested against the simulated worker meets what real engines send: labels sorted by
 * name, values as Python floats (`3.0`, `1.7e+09`), a counter's `_total` family followed by its
 * `_created` gauge.
 */
export class PrometheusTextWriter {
  private readonly lines: string[] = [];

  /** With `only`, just those sample names are written, as prometheus_client's `?name[]=` does. */
  constructor(private readonly only?: ReadonlySet<string>) {}

  gauge(name: string, help: string, samples: readonly Sample[]): this {
    this.family(name, 'gauge', help, samples);
    return this;
  }

  /**
   * `name` without `_total`. With `createdSeconds`, also the `<name>_created` gauge that
   * prometheus_client adds unless it runs in multiprocess mode (SGLang does, vLLM does not).
   */
  counter(name: string, help: string, samples: readonly Sample[], createdSeconds?: number): this {
    this.family(`${name}_total`, 'counter', help, samples);
    if (createdSeconds !== undefined) {
      const created = samples.map(({ labels }) => ({ labels, value: createdSeconds }));
      this.family(`${name}_created`, 'gauge', help, created);
    }
    return this;
  }

  toString(): string {
    return this.lines.map((line) => `${line}\n`).join('');
  }

  private family(name: string, type: string, help: string, samples: readonly Sample[]): void {
    if (this.only && !this.only.has(name)) return;
    this.lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    this.lines.push(`# TYPE ${name} ${type}`);
    for (const { labels, value } of samples) {
      this.lines.push(`${name}${labelText(labels)} ${formatValue(value)}`);
    }
  }
}

function labelText(labels: Labels): string {
  const names = Object.keys(labels).sort();
  if (names.length === 0) return '';
  const pairs = names.map((name) => `${name}="${escapeLabelValue(labels[name])}"`);
  return `{${pairs.join(',')}}`;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** prometheus_client's `floatToGoString`: Python's repr, with Go's earlier switch to exponents. */
export function formatValue(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  const repr = pythonFloatRepr(value);
  const dot = repr.indexOf('.');
  if (value > 0 && dot > 6) {
    const mantissa = `${repr[0]}.${repr.slice(1, dot)}${repr.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return repr;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent outside [1e-4, 1e16). */
function pythonFloatRepr(value: number): string {
  if (Object.is(value, -0)) return '-0.0';
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 1e-4 || magnitude >= 1e16)) {
    const [mantissa, exponent] = value.toExponential().split('e');
    const sign = exponent.startsWith('-') ? '-' : '+';
    return `${mantissa}e${sign}${exponent.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  // Inside that range JavaScript never writes an exponent either.
  const text = String(value);
  return Number.isInteger(value) ? `${text}.0` : text;
}

/** The `name[]` query parameter (one value or several) as a writer's `only`; absent: no filter. */
export function sampleNameFilter(
  raw: string | string[] | undefined,
): ReadonlySet<string> | undefined {
  if (raw === undefined) return undefined;
  return new Set(Array.isArray(raw) ? raw : [raw]);
}
