/**
 * Tool implementations of the exported script: memory and shared memory over
 * /api/v1/memory, lazily opened browser and code-interpreter sessions (closed
 * at exit), and delegation to sub-agents.
 */
export const PYTHON_TOOLS = String.raw`
# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------
def _dumps(value):
    """Compact JSON like the server's tools write, so the model sees the same text either way."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _view(record):
    return {"key": record.get("key"), "content": record.get("content"),
            "metadata": record.get("metadata") or {}, "updated_at": record.get("updated_at")}


def _int(args, key, default, maximum):
    try:
        return max(1, min(maximum, int(args.get(key, default))))
    except (TypeError, ValueError):
        return default


def _required(args, key):
    value = args.get(key)
    if value is None or value == "":
        raise ValueError("missing required argument '%s'" % key)
    return value if isinstance(value, str) else _dumps(value)


def agent_namespace(spec):
    cfg = (spec.get("primitives") or {}).get("memory") or {}
    ns = (cfg.get("namespace") or "agent:{agent_name}").replace("{agent_name}", spec["name"])
    return ns.replace("{user_id}", actor_id()) if "{user_id}" in ns else ns


def shared_namespaces(spec):
    cfg = (spec.get("primitives") or {}).get("memory") or {}
    names = list(spec.get("shared_namespaces") or []) + list(cfg.get("shared_namespaces") or [])
    out = []
    for n in names:
        n = n.replace("{agent_name}", spec["name"])
        if n not in out:
            out.append(n)
    return out


def memory_tools(spec, ns):
    base = "/api/v1/memory/" + q(ns)
    def remember(args):
        key = _required(args, "key")
        api("POST", base, {"key": key, "content": _required(args, "content"),
                           "metadata": {"source": "agent", "agent": spec["name"]}}, spec)
        return "Remembered '%s'." % key
    def recall(args):
        key = _required(args, "key")
        record = api("GET", base + "/" + q(key), spec=spec, allow_404=True)
        return _dumps(_view(record)) if record else "No memory stored under '%s'." % key
    def search_memory(args):
        found = api("POST", base + "/search", {"query": _required(args, "query"), "top_k": _int(args, "top_k", 5, 50)}, spec)
        return _dumps([dict(_view(h["record"]), score=h["score"]) for h in found.get("results", [])])
    def forget(args):
        key = _required(args, "key")
        gone = api("DELETE", base + "/" + q(key), spec=spec, allow_404=True)
        return ("Forgot '%s'." % key) if gone is not None else "No memory stored under '%s'." % key
    def list_memories(args):
        page = api("GET", base + "?limit=%d&offset=0" % _int(args, "limit", 20, 100), spec=spec)
        return _dumps({"total": page.get("total", 0), "records": [_view(r) for r in page.get("records", [])]})
    return {"remember": remember, "recall": recall, "search_memory": search_memory,
            "forget": forget, "list_memories": list_memories}


def shared_memory_tools(spec):
    pools = shared_namespaces(spec)
    def pool(args):
        wanted = args.get("namespace") or pools[0]
        if wanted not in pools:
            raise ValueError("'%s' is not one of this agent's shared namespaces (%s)" % (wanted, ", ".join(pools)))
        return "/api/v1/memory/" + q(wanted)
    def share_finding(args):
        key = _required(args, "key")
        api("POST", pool(args), {"key": key, "content": _required(args, "content"),
                                 "metadata": {"source": "agent", "agent": spec["name"]}}, spec)
        return "Shared '%s' in '%s'." % (key, args.get("namespace") or pools[0])
    def read_shared(args):
        key = _required(args, "key")
        record = api("GET", pool(args) + "/" + q(key), spec=spec, allow_404=True)
        return _dumps(_view(record)) if record else "No shared finding under '%s'." % key
    def search_shared(args):
        found = api("POST", pool(args) + "/search", {"query": _required(args, "query"), "top_k": _int(args, "top_k", 5, 50)}, spec)
        return _dumps([dict(_view(h["record"]), score=h["score"]) for h in found.get("results", [])])
    def list_shared(args):
        page = api("GET", pool(args) + "?limit=%d&offset=0" % _int(args, "limit", 20, 100), spec=spec)
        return _dumps({"total": page.get("total", 0), "records": [_view(r) for r in page.get("records", [])]})
    return {"share_finding": share_finding, "read_shared": read_shared,
            "search_shared": search_shared, "list_shared": list_shared}


class LazySession:
    """A browser or code-interpreter session opened on first use and closed when the script exits."""
    def __init__(self, prefix, spec, body):
        self.prefix, self.spec, self.body = prefix, spec, body
        self.session_id = None
        self.lock = threading.Lock()

    def id(self, body=None):
        with self.lock:
            if self.session_id is None:
                self.session_id = api("POST", self.prefix + "/sessions", body if body is not None else self.body, self.spec)["session_id"]
                atexit.register(self.close)
            return self.session_id

    def close(self):
        if self.session_id is not None:
            try:
                api("DELETE", self.prefix + "/sessions/" + q(self.session_id), spec=self.spec, allow_404=True)
            except Exception:
                pass
            self.session_id = None


def code_interpreter_tools(spec):
    session = LazySession("/api/v1/code-interpreter", spec, {"language": "python"})
    def execute_code(args):
        language = args.get("language")
        # The session is opened in the language of the first call; a call without one uses the session's.
        body = {"code": _required(args, "code")}
        if language:
            body["language"] = language
        sid = session.id({"language": language} if language else {})
        out = api("POST", "/api/v1/code-interpreter/sessions/%s/execute" % q(sid), body, spec)
        return _dumps(out)
    return {"execute_code": execute_code}


def browser_tools(spec):
    session = LazySession("/api/v1/browser", spec, {})
    def path(action):
        return "/api/v1/browser/sessions/%s/%s" % (q(session.id()), action)
    return {
        "navigate": lambda a: _dumps(api("POST", path("navigate"), {"url": _required(a, "url")}, spec)),
        "read_page": lambda a: _dumps(api("GET", path("content"), spec=spec)),
        "click": lambda a: _dumps(api("POST", path("click"), {"selector": _required(a, "selector")}, spec)),
        "type_text": lambda a: _dumps(api("POST", path("type"), {"selector": _required(a, "selector"), "text": _required(a, "text")}, spec)),
        "screenshot": lambda a: _dumps(api("GET", path("screenshot"), spec=spec)),
        "evaluate_js": lambda a: _dumps(api("POST", path("evaluate"), {"expression": _required(a, "expression")}, spec)),
    }


def registry_tools(spec):
    def search_tools(args):
        query = urllib.parse.urlencode({"query": _required(args, "query"), "max_results": _int(args, "max_results", 10, 100)})
        found = api("GET", "/api/v1/tools/search?" + query, spec=spec)
        return _dumps([dict(name=m["tool"]["name"], description=m["tool"].get("description", ""),
                                input_schema=m["tool"].get("input_schema", {}), score=m.get("score"))
                           for m in found.get("matches", [])])
    def invoke_tool(args):
        params = args.get("params") if isinstance(args.get("params"), dict) else {}
        return _dumps(api("POST", "/api/v1/tools/%s/invoke" % q(_required(args, "name")), {"params": params}, spec))
    impl = {"search_tools": search_tools, "invoke_tool": invoke_tool}
    # MCP tools the agent gets as its own ({server}__{tool}), called through the gateway's tools API
    # so the registry's scopes apply and the server's credential never reaches this script.
    for tool in TOOLS.get(spec["name"], []):
        if "__" in tool["name"]:
            def mcp_tool(args, name=tool["name"]):
                out = api("POST", "/api/v1/tools/%s/invoke" % q(name), {"params": args}, spec)
                result = out.get("result") or {}
                texts = [c.get("text") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text" and c.get("text")]
                return "\n".join(texts) if texts else _dumps(result)
            impl[tool["name"]] = mcp_tool
    return impl


def management_tools(spec):
    def create_agent(args):
        body = {"name": _required(args, "name"), "system_prompt": _required(args, "system_prompt"),
                "model": args.get("model") or spec["model"], "description": args.get("description") or ""}
        api("POST", "/api/v1/agents", body, spec)
        return "Created agent '%s'." % body["name"]
    def list_agents(args):
        agents = api("GET", "/api/v1/agents", spec=spec).get("agents", [])
        return _dumps([{"name": a["name"], "description": a.get("description", "")} for a in agents])
    def list_primitives(args):
        return _dumps(list(api("GET", "/api/v1/providers", spec=spec).keys()))
    def delete_agent(args):
        name = _required(args, "name")
        if name == spec["name"]:
            raise ValueError("an agent cannot delete itself")
        api("DELETE", "/api/v1/agents/" + q(name), spec=spec)
        return "Deleted agent '%s'." % name
    def delegate_to(args):
        # Agents made at run time are not in this script: the gateway runs them.
        out = api("POST", "/api/v1/agents/%s/chat" % q(_required(args, "agent")), {"message": _required(args, "message")}, spec)
        return out.get("response", "")
    return {"create_agent": create_agent, "list_agents": list_agents, "list_primitives": list_primitives,
            "delete_agent": delete_agent, "delegate_to": delegate_to}


def agent_tools(spec, depth, on_event):
    out = {}
    for name in ((spec.get("primitives") or {}).get("agents") or {}).get("tools") or []:
        def call(args, name=name):
            if depth + 1 > MAX_DEPTH:
                raise ValueError("delegation depth limit (%d) reached; answer without calling '%s'" % (MAX_DEPTH, name))
            if name not in AGENTS:
                raise ValueError("agent '%s' was not exported with this script" % name)
            def sub_event(kind, payload):
                if kind == "token":
                    on_event("sub_agent_token", {"agent": name, "content": payload})
                elif kind == "tool":
                    on_event("sub_agent_tool", {"agent": name, "name": payload})
                else:
                    on_event(kind, payload)
            return run_loop(AGENTS[name], [{"role": "user", "content": _required(args, "message")}], depth + 1, sub_event)["response"]
        out["call_" + name] = call
    return out


def implementations(spec, depth, on_event):
    """Every tool implementation this agent may use, by name."""
    prims = spec.get("primitives") or {}
    impl = {}
    if (prims.get("memory") or {}).get("enabled"):
        impl.update(memory_tools(spec, agent_namespace(spec)))
    if shared_namespaces(spec):
        impl.update(shared_memory_tools(spec))
    if (prims.get("code_interpreter") or {}).get("enabled"):
        impl.update(code_interpreter_tools(spec))
    if (prims.get("browser") or {}).get("enabled"):
        impl.update(browser_tools(spec))
    if (prims.get("tools") or {}).get("enabled"):
        impl.update(registry_tools(spec))
    if (prims.get("agent_management") or {}).get("enabled"):
        impl.update(management_tools(spec))
    if (prims.get("agents") or {}).get("enabled"):
        impl.update(agent_tools(spec, depth, on_event))
    return impl
`;
