/**
 * The worker thread of `fuzz-runner.ts`: imports a property module, runs the property it is
 * told to, and posts its {@link PropertyReport} back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckParams, PropertyReport, PropertyRunner } from './fuzz-runner.js';

interface Task extends CheckParams {
  readonly module: string;
  readonly name: string;
}

const task = workerData as Task;
const imported = (await import(task.module)) as { readonly properties?: { readonly [name: string]: PropertyRunner } };
const run = imported.properties?.[task.name];
if (run === undefined) throw new Error(`${task.module} has no property ${task.name}`);
const answer: PropertyReport = await run({ seed: task.seed, numRuns: task.numRuns, dir: task.dir });
parentPort?.postMessage(answer);
