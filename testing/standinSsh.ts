/**
 * A stand-in `ssh` for the tools' tests of `npm run node`: an executable named ssh in a folder of its own, put first
 * on PATH, whose shell `case` answers each call as a machine would (its arguments are "$*").
 */
import * as fs from 'fs';
import * as path from 'path';

/** Writes the stand-in into `<work>/bin` with the `case "$*" in` arms `arms` (one per line); returns that folder. */
export function standinSsh(work: string, arms: readonly string[]): string {
  const bin = path.join(work, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const script = ['#!/bin/sh', 'case "$*" in', ...arms.map((arm) => `  ${arm}`), 'esac', ''].join('\n');
  fs.writeFileSync(path.join(bin, 'ssh'), script, { mode: 0o755 });
  return bin;
}
