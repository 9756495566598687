import t from 'tap';
import { memoryTypes } from '../agents/helpers.ts';
import { doneWhen } from '../agents/scenarios.ts';

// The acceptance list, once per memory provider type that exists.
const types = await memoryTypes();
t.ok(types.length > 0, `memory provider types found: ${types.join(', ') || '(none)'}`);
// There is no memory provider of type `noop`: noop mode (no configuration) is the `default` run.
for (const memory of ['default', ...types]) doneWhen(t, memory);
