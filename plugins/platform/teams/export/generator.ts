import type { TeamSpec } from '../schemas.ts';
import { TEAM_PYTHON_CLIENT } from './python-client.ts';
import { TEAM_PYTHON_RUN } from './python-run.ts';

/**
 * A standalone Python 3 script (standard library only) that runs the team
 * against the gateway's REST API: agents through `/api/v1/agents/{name}/chat`,
 * shared findings through `/api/v1/memory`. Values are embedded as JSON string
 * literals, which are valid Python string literals, so no spec text can break
 * out of the source.
 */
export function generateTeamScript(team: TeamSpec, baseUrl: string, maxReplans = 1): string {
  const embedded = {
    name: team.name,
    description: team.description,
    planner: team.planner,
    synthesizer: team.synthesizer,
    workers: team.workers,
    global_max_turns: team.global_max_turns,
    global_timeout_seconds: team.global_timeout_seconds,
    shared_memory_namespace: team.shared_memory_namespace,
    max_concurrent: team.max_concurrent ?? null,
  };
  const header = [
    '#!/usr/bin/env python3',
    `"""Team ${team.name} exported from Switchboard.`,
    '',
    'Runs the team against the gateway: the planner splits the request into tasks, workers run them',
    '(dependencies first, independent tasks in parallel, one chat session per task), the synthesizer',
    'writes the answer. Usage: python3 this_file.py [--json] "your request"',
    '"""',
    'import json',
    'import os',
    'import sys',
    'import threading',
    'import time',
    'import urllib.error',
    'import urllib.parse',
    'import urllib.request',
    'import uuid',
    'from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait',
    '',
    `TEAM = json.loads(${JSON.stringify(JSON.stringify(embedded, null, 2))})`,
    `DEFAULT_BASE_URL = ${JSON.stringify(baseUrl)}`,
    "# Replanning rounds after tasks fail: the server's platform.teams.max_replans when exported.",
    `MAX_REPLANS = int(os.environ.get("SWITCHBOARD_MAX_REPLANS", "${maxReplans}"))`,
  ].join('\n');
  return `${header}\n${TEAM_PYTHON_CLIENT}\n${TEAM_PYTHON_RUN}`;
}
