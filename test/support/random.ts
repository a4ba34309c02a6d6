/** Random draws for generated count series in specs; `r` is a uniform [0, 1) source (e.g. mulberry32). */

/** Poisson draw (Knuth's product method; fine for the small means specs use). */
export function poisson(r: () => number, mean: number): number {
  const l = Math.exp(-mean);
  let k = 0;
  let p = r();
  while (p > l) {
    k++;
    p *= r();
  }
  return k;
}

/** Gamma(shape, 1) draw by Marsaglia–Tsang (shape ≥ 1). */
export function gamma(r: () => number, shape: number): number {
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      const u1 = r();
      const u2 = r();
      x = Math.sqrt(-2 * Math.log(u1 || 1e-12)) * Math.cos(2 * Math.PI * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    if (Math.log(r() || 1e-12) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}
