#!/usr/bin/env python3
"""Compatibility check: the request shapes of the reference clients, sent to a running Switchboard.

Written from the reference projects' client code and pydantic models (the
agent-platform gateway's Python client, the MCP gateway registry's CLIs and API
models); none of their code is used. Each check sends what those clients send
(optional fields as null, their field names) and reads the answer the way
they read it (`.json()` on deletes, `tools` from a search, ...).

Usage: reference_clients.py BASE_URL  (env SB_REGISTRY_TOKEN: a registry admin bearer token)
Standard library only. Exit status 0 when every check passes; failures are listed.
"""

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

BASE = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else "http://127.0.0.1:7860"
REGISTRY_TOKEN = os.environ.get("SB_REGISTRY_TOKEN", "")
# Pin the in-memory providers, whatever the deployment's defaults are.
PLATFORM_HEADERS = {
    "X-Provider-Browser": "noop",
    "X-Provider-Code-Interpreter": "noop",
    "X-Provider-Tools": "noop",
    "X-Provider-Llm": "noop",
    "X-Provider-Observability": "noop",
    "X-Provider-Identity": "noop",
    "X-Provider-Policy": "noop",
    "X-Provider-Memory": "in_memory",
}

failures = []
passed = 0


class Answer:
    def __init__(self, status, body, headers):
        self.status = status
        self.body = body
        self.headers = headers

    def json(self):
        # What httpx's Response.json() does: raises on an empty or non-JSON body.
        return json.loads(self.body.decode("utf-8"))


def call(method, path, json_body=None, form=None, headers=None, params=None):
    url = BASE + path
    if params:
        url += "?" + urllib.parse.urlencode(params, doseq=True)
    data = None
    hdrs = dict(headers or {})
    if json_body is not None:
        data = json.dumps(json_body).encode("utf-8")
        hdrs["Content-Type"] = "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form, doseq=True).encode("utf-8")
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return Answer(resp.status, resp.read(), dict(resp.headers))
    except urllib.error.HTTPError as err:
        return Answer(err.code, err.read(), dict(err.headers))


def platform(method, path, **kw):
    return call(method, "/api/v1" + path, headers={**PLATFORM_HEADERS, **kw.pop("headers", {})}, **kw)


def registry(method, path, **kw):
    return call(method, path, headers={"Authorization": "Bearer " + REGISTRY_TOKEN, **kw.pop("headers", {})}, **kw)


def check(name, fn):
    global passed
    try:
        fn()
        passed += 1
        print("ok   " + name)
    except Exception as err:  # a failed expectation or an answer that does not parse
        failures.append((name, repr(err)))
        print("FAIL " + name + ": " + repr(err))


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def ok_json(answer, *statuses):
    """The client's _raise_for_status then .json(): a 2xx whose body parses."""
    expect(answer.status in (statuses or (200, 201, 202)), "status %s: %s" % (answer.status, answer.body[:300]))
    return answer.json()


# ── Platform (agentic-primitives-gateway client) ─────────────────────────────


def providers_listing():
    body = ok_json(platform("GET", "/providers"))
    for primitive in ("memory", "llm", "browser", "tools", "observability"):
        expect("default" in body[primitive] and isinstance(body[primitive]["available"], list), primitive)


def credentials_write_and_delete():
    written = ok_json(platform("PUT", "/credentials", json_body={"attributes": {"compat_token": "tok-000011112222"}}))
    expect(isinstance(written, dict), "write answers an object")
    deleted = ok_json(platform("DELETE", "/credentials/compat_token"))  # delete_credential() calls .json()
    expect(deleted.get("status") == "deleted", deleted)


def memory_records():
    stored = ok_json(platform("POST", "/memory/compat-ns", json_body={"key": "k1", "content": "the sky is blue", "metadata": {}}))
    expect(stored["key"] == "k1", stored)
    got = ok_json(platform("GET", "/memory/compat-ns/k1"))
    expect(got["content"] == "the sky is blue", got)
    found = ok_json(platform("POST", "/memory/compat-ns/search", json_body={"query": "sky", "top_k": 5, "filters": {}}))
    expect(any(r["record"]["key"] == "k1" for r in found["results"]), found)
    listed = ok_json(platform("GET", "/memory/compat-ns"))
    expect(listed["total"] >= 1 and isinstance(listed["records"], list), listed)
    expect(platform("DELETE", "/memory/compat-ns/k1").status == 204, "delete_memory accepts 204")


def memory_conversation_fork():
    ev = ok_json(platform("POST", "/memory/sessions/compat-actor/s1/events", json_body={"messages": [{"text": "hello", "role": "user"}], "metadata": {}}))
    fork = ok_json(platform("POST", "/memory/sessions/compat-actor/s1/branches", json_body={"root_event_id": ev["event_id"], "branch_name": "alt", "messages": [{"text": "other", "role": "user"}]}))
    expect(fork["name"] == "alt", fork)
    branches = ok_json(platform("GET", "/memory/sessions/compat-actor/s1/branches"))
    expect(any(b["name"] == "alt" for b in branches["branches"]), branches)


def memory_resources_and_strategies():
    res = ok_json(platform("POST", "/memory/resources", json_body={"name": "compat-kb", "strategies": [{"type": "semantic"}], "description": ""}))
    mid = res["memory_id"]
    strat = ok_json(platform("POST", "/memory/resources/%s/strategies" % mid, json_body={"strategy": {"type": "summary"}}))
    expect(strat["strategy_id"], strat)
    listed = ok_json(platform("GET", "/memory/resources/%s/strategies" % mid))
    expect("strategies" in listed and len(listed["strategies"]) == 2, listed)
    expect(platform("DELETE", "/memory/resources/%s/strategies/%s" % (mid, strat["strategy_id"])).status == 204, "strategy delete")
    expect(platform("DELETE", "/memory/resources/" + mid).status == 204, "resource delete")


def browser_session_with_nulls():
    s = ok_json(platform("POST", "/browser/sessions", json_body={"session_id": None, "viewport": None, "config": {}}))
    expect(s["session_id"], s)
    expect(platform("DELETE", "/browser/sessions/" + s["session_id"]).status == 204, "stop accepts 204")


def code_session_with_nulls():
    s = ok_json(platform("POST", "/code-interpreter/sessions", json_body={"session_id": None, "language": "python", "config": {}}))
    expect(s["session_id"] and s["language"] == "python", s)
    expect(platform("DELETE", "/code-interpreter/sessions/" + s["session_id"]).status == 204, "stop accepts 204")


def policy_engine_with_config():
    engine = ok_json(platform("POST", "/policy/engines", json_body={"name": "compat-engine", "description": "", "config": {"mode": "strict"}}))
    expect(engine.get("config") == {"mode": "strict"}, engine)
    expect(platform("DELETE", "/policy/engines/" + engine["engine_id"]).status == 204, "engine delete accepts 204")


def tools_register_and_search():
    ok_json(platform("POST", "/tools", json_body={"name": "compat_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "metadata": {}}))
    found = ok_json(platform("GET", "/tools/search", params={"query": "weather", "max_results": 10}))
    tools = found["tools"]  # the client reads `tools`
    expect(any(t["name"] == "compat_weather" and "description" in t and "parameters" in t for t in tools), found)
    expect(platform("DELETE", "/tools/compat_weather").status == 204, "tool delete accepts 204")


def llm_completion_with_tools():
    request = {
        "model": "",
        "messages": [{"role": "user", "content": "weather in Paris?"}],
        "temperature": 1.0,
        "max_tokens": None,
        "metadata": {},
        "tools": [{"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}],
        "tool_choice": "auto",
        "system": None,
    }
    body = ok_json(platform("POST", "/llm/completions", json_body=request))
    expect(isinstance(body["content"], str) and body["model"], body)
    expect(not body.get("tool_calls"), "the noop LLM calls no tool")
    for choice in ("any", "none", {"type": "tool", "name": "get_weather"}):
        ok_json(platform("POST", "/llm/completions", json_body={**request, "tool_choice": choice}))


def observability_extended():
    ok_json(platform("POST", "/observability/traces", json_body={"trace_id": "compat-trace", "name": "chat", "user_id": None, "session_id": None, "input": "hi", "output": None, "tags": [], "spans": [], "metadata": {}}))
    updated = ok_json(platform("PUT", "/observability/traces/compat-trace", json_body={"name": None, "user_id": None, "session_id": None, "input": None, "output": "hello", "metadata": {"k": 1}, "tags": ["done"]}))
    expect(updated["output"] == "hello" and updated["tags"] == ["done"], updated)
    gen = ok_json(platform("POST", "/observability/traces/compat-trace/generations", json_body={"name": "completion", "model": "noop", "input": None, "output": "x", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}, "metadata": {}, "level": None}))
    expect(gen["trace_id"] == "compat-trace" and gen["model"] == "noop", gen)
    score = ok_json(platform("POST", "/observability/traces/compat-trace/scores", json_body={"name": "quality", "value": 0.5, "comment": None, "data_type": None}))
    expect(score["name"] == "quality" and score["value"] == 0.5, score)
    scores = ok_json(platform("GET", "/observability/traces/compat-trace/scores"))
    expect(any(s["name"] == "quality" for s in scores["scores"]), scores)
    flushed = ok_json(platform("POST", "/observability/flush"))
    expect("status" in flushed, flushed)


def identity_auth_complete():
    answer = platform("POST", "/identity/auth/complete", json_body={"session_uri": "urn:compat:session"})
    # No shipped provider runs a 3-legged flow: a clear 501 whose detail the client shows.
    expect(answer.status in (204, 501), "status %s" % answer.status)
    if answer.status == 501:
        expect("3-legged" in answer.json()["detail"], answer.json())


def agents_and_teams():
    spec = {"name": "compat-agent", "description": "", "model": "noop", "system_prompt": "You are a helpful assistant.", "primitives": {"memory": {"enabled": True, "tools": None, "namespace": None, "shared_namespaces": None, "options": {}}}, "hooks": {"auto_memory": True, "auto_trace": True}, "provider_overrides": {}, "max_turns": 20, "temperature": 1.0, "max_tokens": None, "shared_with": []}
    created = ok_json(platform("POST", "/agents", json_body=spec))
    expect(created["name"] == "compat-agent", created)
    updated = ok_json(platform("PUT", "/agents/compat-agent", json_body={"description": "changed", "model": None, "system_prompt": None, "primitives": None, "hooks": None, "provider_overrides": None, "max_turns": None, "temperature": None, "max_tokens": None, "shared_with": None, "checkpointing_enabled": None}))
    expect(updated["description"] == "changed" and updated["model"] == "noop", updated)
    for name in ("compat-planner", "compat-worker"):
        ok_json(platform("POST", "/agents", json_body={**spec, "name": name}))
    team = ok_json(platform("POST", "/teams", json_body={"name": "compat-team", "description": "", "planner": "compat-planner", "synthesizer": "compat-planner", "workers": ["compat-worker"], "max_concurrent": 2, "global_max_turns": 100, "global_timeout_seconds": 300, "shared_memory_namespace": None, "shared_with": []}))
    expect(team["max_concurrent"] == 2, team)
    expect(isinstance(ok_json(platform("DELETE", "/teams/compat-team")), dict), "delete_team() calls .json()")
    for name in ("compat-agent", "compat-planner", "compat-worker"):
        deleted = ok_json(platform("DELETE", "/agents/" + name))  # delete_agent() calls .json()
        expect(deleted.get("status") == "deleted", deleted)


# ── Registry (mcp-gateway-registry CLIs and API models) ──────────────────────


def register_server_single_transport():
    form = {"name": "Compat Time", "description": "current time", "path": "/compat-time", "proxy_pass_url": "http://127.0.0.1:9/mcp", "tags": "time,compat", "supported_transports": "streamable-http", "version": "v1.0.0"}
    ok_json(registry("POST", "/api/servers/register", form=form), 200, 201)
    server = ok_json(registry("GET", "/api/servers/compat-time"))
    expect(server["version"] == "v1.0.0", server)


def new_version_not_default():
    form = {"name": "Compat Time", "description": "beta", "path": "/compat-time", "proxy_pass_url": "http://127.0.0.1:9/beta", "supported_transports": "streamable-http,sse", "version": "v0.9.0", "status": "beta"}
    ok_json(registry("POST", "/api/servers/register", form=form), 200, 201)
    server = ok_json(registry("GET", "/api/servers/compat-time"))
    expect(server["version"] == "v1.0.0", "the beta must not become the default: %s" % server["version"])
    versions = ok_json(registry("GET", "/api/servers/compat-time/versions"))
    expect(sorted(v["version"] for v in versions) == ["v0.9.0", "v1.0.0"], versions)


def agent_card_camel_case():
    card = {"name": "compat-agent", "description": "echo", "url": "https://agents.example/compat", "version": "1.0.0", "protocolVersion": "0.3.0", "securitySchemes": {"bearer": {"type": "bearer"}}, "skills": [{"id": "echo", "name": "echo", "description": "echoes", "tags": []}], "capabilities": {"streaming": False}, "isEnabled": False, "trustLevel": "verified", "visibility": "public"}
    ok_json(registry("POST", "/api/agents/register", json_body=card), 200, 201)
    got = ok_json(registry("GET", "/api/agents/compat-agent"))
    expect(got["trust_level"] == "unverified" and got["is_enabled"] is True, got)
    expect("trustLevel" not in got and "isEnabled" not in got, "camelCase twins of server fields are not echoed")
    expect(got.get("protocol_version") == "0.3.0" and "bearer" in got["security_schemes"], got)


def v0_1_lists():
    seen = []
    cursor = None
    for _ in range(20):
        params = {"limit": 1}
        if cursor:
            params["cursor"] = cursor
        page = ok_json(registry("GET", "/v0.1/servers", params=params))
        seen += [item["server"]["name"] for item in page["servers"]]
        cursor = page["metadata"].get("nextCursor")
        if not cursor:
            break
    expect(any(name.endswith("/compat-time") for name in seen), seen)
    agents = ok_json(registry("GET", "/v0.1/agents", params={"limit": 10}))
    expect(any(a["name"] == "compat-agent" for a in agents["agents"]) and "nextCursor" in agents["metadata"], agents)


CHECKS = [
    providers_listing, credentials_write_and_delete, memory_records, memory_conversation_fork, memory_resources_and_strategies,
    browser_session_with_nulls, code_session_with_nulls, policy_engine_with_config, tools_register_and_search, llm_completion_with_tools,
    observability_extended, identity_auth_complete, agents_and_teams,
    register_server_single_transport, new_version_not_default, agent_card_camel_case, v0_1_lists,
]

if __name__ == "__main__":
    for fn in CHECKS:
        check(fn.__name__, fn)
    print("%d passed, %d failed" % (passed, len(failures)))
    sys.exit(1 if failures else 0)
