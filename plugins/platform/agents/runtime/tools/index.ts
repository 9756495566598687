import { registerToolGroup } from '../catalog.ts';
import agentManagement from './agent-management.ts';
import agents from './agents.ts';
import browser from './browser.ts';
import codeInterpreter from './code-interpreter.ts';
import memory from './memory.ts';
import sharedMemory from './shared-memory.ts';
import tools from './tools.ts';

/** Each primitive with agent tools registers its group here, once per process. */
for (const group of [memory, sharedMemory, codeInterpreter, browser, tools, agentManagement, agents])
  registerToolGroup(group);
