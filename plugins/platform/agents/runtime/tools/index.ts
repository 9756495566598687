import { registerToolGroup } from '../catalog.ts';
import agents from './agents.ts';
import memory from './memory.ts';
import sharedMemory from './shared-memory.ts';

/** Each primitive with agent tools registers its group here, once per process. */
for (const group of [memory, sharedMemory, agents]) registerToolGroup(group);
