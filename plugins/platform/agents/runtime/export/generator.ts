import type { AgentSpec } from '../../schemas.ts';
import type { ToolSpec } from '../catalog.ts';
import { MAX_DELEGATION_DEPTH } from '../tools/agents.ts';
import { EXPORT_ONLY_TOOLS } from './extra-tools.ts';
import { PYTHON_CLIENT } from './python-client.ts';
import { PYTHON_LOOP } from './python-loop.ts';
import { PYTHON_TOOLS } from './python-tools.ts';

/** The spec fields the script needs; ownership and timestamps stay on the server. */
function portable(spec: AgentSpec): Record<string, unknown> {
  const {
    name,
    model,
    description,
    system_prompt,
    primitives,
    hooks,
    max_turns,
    temperature,
    max_tokens,
    provider_overrides,
    shared_namespaces,
  } = spec;
  return {
    name,
    model,
    description,
    system_prompt,
    primitives,
    hooks,
    max_turns,
    temperature,
    ...(max_tokens ? { max_tokens } : {}),
    provider_overrides,
    shared_namespaces,
  };
}

/** JSON is a Python expression once true/false/null are defined, which the script does. */
const py = (value: unknown) => JSON.stringify(value, null, 4);

export interface ExportInput {
  agent: AgentSpec;
  /** The agent and every sub-agent reachable within the depth limit, by name. */
  agents: Map<string, AgentSpec>;
  /** Tool definitions per agent, as the server loop offers them. */
  tools: Map<string, ToolSpec[]>;
  baseUrl: string;
}

export function toolsForExport(spec: AgentSpec, serverTools: ToolSpec[]): ToolSpec[] {
  const out = serverTools.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
  for (const key of ['code_interpreter', 'browser'] as const) {
    if (spec.primitives[key]?.enabled)
      for (const t of EXPORT_ONLY_TOOLS[key]) if (!out.some((o) => o.name === t.name)) out.push(t);
  }
  return out;
}

/** A standalone Python 3 script (standard library only) that runs the agent against the gateway's REST API. */
export function generatePythonExport(input: ExportInput): string {
  const agents = Object.fromEntries([...input.agents].map(([n, s]) => [n, portable(s)]));
  const tools = Object.fromEntries(input.tools);
  const header = String.raw`#!/usr/bin/env python3
"""Switchboard agent '${input.agent.name}', exported as a standalone script.

${input.agent.description ? `${input.agent.description.replace(/"""/g, "'''")}\n\n` : ''}Needs Python 3.8+ and nothing beyond the standard library. The model is called
through the gateway's LLM primitive (POST /api/v1/llm/completions), so the
agent runs with whatever LLM provider the gateway routes to; memory tools use
/api/v1/memory. Configuration is read from the environment (see below).

    python3 ${input.agent.name}.py "your message"            # one message
    python3 ${input.agent.name}.py --session abc "and then?" # continue a session
    python3 ${input.agent.name}.py                           # interactive
"""
import argparse
import atexit
import base64
import concurrent.futures
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

true, false, null = True, False, None

DEFAULT_BASE_URL = ${JSON.stringify(input.baseUrl)}
AGENT_NAME = ${JSON.stringify(input.agent.name)}
MAX_DEPTH = ${MAX_DELEGATION_DEPTH}

# The agent and the sub-agents it delegates to (call_<name> tools).
AGENTS = ${py(agents)}

# Tool definitions offered to the model, per agent.
TOOLS = ${py(tools)}
`;
  return [header, PYTHON_CLIENT, PYTHON_TOOLS, PYTHON_LOOP].join('\n');
}
