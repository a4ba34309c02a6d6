/** File I/O and wording shared by the `backtest` command's two modes (--series, --posts). */
import * as fs from 'node:fs';
import { AppError } from '../common/errors';

export function readText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export function writePlot(file: string, svg: string): void {
  try {
    fs.writeFileSync(file, svg);
  } catch (e) {
    throw new AppError('VALIDATION_ERROR', `cannot write plot ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
