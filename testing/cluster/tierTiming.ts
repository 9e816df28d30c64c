/**
 * The kubelet tier's timing log: with LACCHAIN_KUBELET_TIMING naming a file, each step of a suite's cluster (its
 * start, the worker's, the images imported, the shared cluster taken and cleaned after a file, the stop) appends one
 * line there, `<ISO time> <step>`, to tell where a file's time goes outside its tests. Nothing is written without it.
 */
import * as fs from 'fs';

/** The environment variable naming the timing log. */
const TIMING_VARIABLE = 'LACCHAIN_KUBELET_TIMING';

/** Appends `step` to the timing log, when there is one. */
export function timing(step: string): void {
  const file = process.env[TIMING_VARIABLE];
  if (file) fs.appendFileSync(file, `${new Date().toISOString()} ${step}\n`);
}
